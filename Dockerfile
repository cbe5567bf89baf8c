# Multi-stage build of a small static image that runs as non-root. The build stage runs the
# same script CI runs outside Docker (scripts/build-static.sh), so these steps are proven.
# The build stage runs on the builder's own platform and cross-compiles for the image's
# (docker buildx build --platform linux/amd64,linux/arm64: TARGETPLATFORM is each of them;
# the script installs the cross toolchain, and runs the arm64 binary through QEMU).
FROM --platform=$BUILDPLATFORM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
# .git is not in the build context: --version says "commit unknown" unless this is given
# (docker build --build-arg CRD_AUDIT_GIT_COMMIT=$(git rev-parse --short=12 HEAD) .).
ARG CRD_AUDIT_GIT_COMMIT=
ARG TARGETPLATFORM
RUN CRD_AUDIT_GIT_COMMIT="$CRD_AUDIT_GIT_COMMIT" bash scripts/build-static.sh ${TARGETPLATFORM:+--platform "$TARGETPLATFORM"} /out/crd-audit

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/crd-audit /crd-audit
COPY config/crd-audit.yaml /etc/crd-audit/crd-audit.yaml
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/crd-audit"]
CMD ["controller", "--config", "/etc/crd-audit/crd-audit.yaml"]
