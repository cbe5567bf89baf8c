# Multi-stage build of a small static image that runs as non-root. The build stage runs the
# same script CI runs outside Docker (scripts/build-static.sh), so these steps are proven.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN bash scripts/build-static.sh /out/crd-audit

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/crd-audit /crd-audit
COPY config/crd-audit.yaml /etc/crd-audit/crd-audit.yaml
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/crd-audit"]
CMD ["controller", "--config", "/etc/crd-audit/crd-audit.yaml"]
