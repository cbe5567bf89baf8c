//! A validating admission webhook for custom resources, as a kube-rs user writes one, without
//! the HTTP server: each `AdmissionReview` the API server would send is answered with the
//! judgement the API server itself gives the write (validation ratcheting on updates included).
//!
//! ```text
//! cargo run -p crd-audit-engine --features k8s-openapi --example admission_review -- \
//!     examples/crds/widgets.yaml examples/admission/reviews.yaml
//! ```
//!
//! The CRD comes in as k8s-openapi's `CustomResourceDefinition` (as a kube-rs program reads it
//! from the cluster) and the requests as `AdmissionReview<DynamicObject>`. Each response review
//! is printed as one line of JSON, as the webhook would return it.

use crd_audit_engine::{Crd, CrdValidator, Mode, Outcome, Subresource, load};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [crd_file, reviews_file] = args.as_slice() else {
        eprintln!("usage: admission_review CRD.yaml REVIEWS.yaml");
        return ExitCode::from(2);
    };
    match run(crd_file, reviews_file) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(crd_file: &str, reviews_file: &str) -> Result<(), Box<dyn std::error::Error>> {
    // Each document with where it is (`file#index (line N)`), for errors that name it.
    let read =
        |file: &str| -> Result<Vec<(String, serde_json::Value)>, Box<dyn std::error::Error>> {
            let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
            let mut documents = Vec::new();
            for document in load::parse_str(file, &text) {
                let document = document?;
                let at = format!("{file}#{} (line {})", document.index, document.line);
                documents.push((at, document.value));
            }
            Ok(documents)
        };
    let (at, crd_value) = read(crd_file)?
        .into_iter()
        .next()
        .ok_or_else(|| format!("{crd_file}: no document"))?;
    let crd: CustomResourceDefinition =
        serde_json::from_value(crd_value).map_err(|e| format!("{at}: not a CRD: {e}"))?;
    let crd = Crd::try_from(&crd).map_err(|e| format!("{at}: {e}"))?;
    let validator = CrdValidator::new(&crd)?;

    for (at, review) in read(reviews_file)? {
        let review: AdmissionReview<DynamicObject> = serde_json::from_value(review)
            .map_err(|e| format!("{at}: not an AdmissionReview: {e}"))?;
        let request: AdmissionRequest<DynamicObject> =
            review.try_into().map_err(|e| format!("{at}: {e}"))?;
        let response = judge(&validator, &request)?;
        println!("{}", serde_json::to_string(&response.into_review())?);
    }
    Ok(())
}

/// The API server's answer to the write `request` asks about.
fn judge(
    validator: &CrdValidator,
    request: &AdmissionRequest<DynamicObject>,
) -> Result<AdmissionResponse, serde_json::Error> {
    let response = AdmissionResponse::from(request);
    let Some(object) = &request.object else {
        return Ok(response); // a DELETE: nothing to validate
    };
    let new = serde_json::to_value(object)?;
    let (outcome, warnings, message) = match (&request.operation, &request.old_object) {
        (Operation::Update, Some(old)) => {
            let to = match request.sub_resource.as_deref() {
                Some("status") => Subresource::Status,
                _ => Subresource::Main,
            };
            let verdict = validator.validate_update(serde_json::to_value(old)?, new, to);
            let message = verdict.status_message(&qualified_kind(validator));
            (verdict.outcome, verdict.warnings, message)
        }
        _ => {
            let verdict = validator.validate(new, Mode::Create);
            let message = verdict.status_message(&qualified_kind(validator));
            (verdict.outcome, Vec::new(), message)
        }
    };
    let mut response = match outcome {
        Outcome::Admitted => response,
        Outcome::Refused { .. } => {
            let mut denied = response.deny(message.unwrap_or_default());
            denied.result.code = 422;
            denied.result.reason = "Invalid".to_string();
            denied
        }
        Outcome::RequestError(e) => response.deny(e.message),
        Outcome::InternalError { message } => response.deny(message),
        _ => response.deny("an outcome this webhook does not know"),
    };
    if !warnings.is_empty() {
        response.warnings = Some(warnings);
    }
    Ok(response)
}

/// `Kind.group`, as the API server names the kind in its messages.
fn qualified_kind(validator: &CrdValidator) -> String {
    format!("{}.{}", validator.kind(), validator.group())
}
