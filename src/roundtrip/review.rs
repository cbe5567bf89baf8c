//! A `ConversionReview` as kube-apiserver sends it to a CRD's conversion webhook, and its
//! answer checked as kube-apiserver checks it (apiextensions-apiserver's
//! `webhook_converter.go`), with the server's error texts: what the API server would answer a
//! client whose request needs that conversion. No I/O.
//!
//! One object per review, as the server sends them (its storage decodes objects one at a
//! time). An error's text starts as the server's does, `conversion webhook for <group>/<the
//! input's version>, Kind=<Kind>`.

use serde_json::{Value, json};

/// The `ConversionReview` version a webhook is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReviewVersion {
    V1,
    V1beta1,
}

impl ReviewVersion {
    /// The first of a CRD's `conversionReviewVersions` the API server speaks (`v1`,
    /// `v1beta1`); else the server's error.
    pub fn choose(versions: &[String]) -> Result<ReviewVersion, String> {
        versions
            .iter()
            .find_map(|v| match v.as_str() {
                "v1" => Some(ReviewVersion::V1),
                "v1beta1" => Some(ReviewVersion::V1beta1),
                _ => None,
            })
            .ok_or_else(|| "no supported conversion review versions".to_string())
    }

    fn api_version(self) -> &'static str {
        match self {
            ReviewVersion::V1 => "apiextensions.k8s.io/v1",
            ReviewVersion::V1beta1 => "apiextensions.k8s.io/v1beta1",
        }
    }
}

/// The review asking the webhook to convert `object` to `desired` (`group/version`).
pub fn request(version: ReviewVersion, uid: &str, desired: &str, object: &Value) -> Value {
    json!({
        "kind": "ConversionReview",
        "apiVersion": version.api_version(),
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": [object]},
    })
}

/// `conversion webhook for <apiVersion>, Kind=<kind>` of the object sent.
pub fn prefix(sent: &Value) -> String {
    let text = |k: &str| {
        sent.get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    format!(
        "conversion webhook for {}, Kind={}",
        text("apiVersion"),
        text("kind")
    )
}

/// The message client-go makes of a response that is not 2xx (`transformResponse`), which
/// the API server puts after `<prefix> failed: `: a `Status` body's message, else a generic
/// text by status code, with the body when it is text.
pub fn http_error(status: u16, content_type: Option<&str>, body: &[u8]) -> String {
    if let Ok(s) = serde_json::from_slice::<Value>(body)
        && s["kind"] == "Status"
        && s["status"] == "Failure"
    {
        return s["message"].as_str().unwrap_or("").to_string();
    }
    let text = content_type.is_none_or(|c| c.starts_with("text/"));
    let server_message = if text {
        String::from_utf8_lossy(body).trim().to_string()
    } else {
        "unknown".to_string()
    };
    match status {
        503 => "the server is currently unable to handle the request".into(),
        504 => "the server was unable to return a response in the time allotted, but may still be processing the request".into(),
        429 => "the server has received too many requests and has asked us to try again later".into(),
        400 => "the server rejected our request for an unknown reason".into(),
        401 => "the server has asked for the client to provide credentials".into(),
        403 => server_message,
        404 => "the server could not find the requested resource".into(),
        405 => "the server does not allow this method on the requested resource".into(),
        409 => "the server reported a conflict".into(),
        422 => "the server rejected our request due to an error in our request".into(),
        s if s >= 500 => format!(
            "an error on the server ({}) has prevented the request from succeeding",
            crd_audit_engine::render::quote(&server_message)
        ),
        s => format!("the server responded with the status code {s} but did not return more information"),
    }
}

/// The object converted by a 2xx answer `body` to the review `uid` of `version` that sent
/// `sent` to be converted to `desired`, checked and restored as the API server does; else the
/// error the API server would answer.
pub fn converted(
    version: ReviewVersion,
    uid: &str,
    sent: &Value,
    desired: &str,
    body: &[u8],
) -> Result<Value, String> {
    let p = prefix(sent);
    let failed = |e: String| format!("{p} failed: {e}");
    if body.is_empty() {
        return Err(failed(
            "0-length response with status code: 200 and content type: ".into(),
        ));
    }
    let review: Value = serde_json::from_slice(body).map_err(|e| failed(e.to_string()))?;
    let got = (
        review["apiVersion"].as_str().unwrap_or(""),
        review["kind"].as_str().unwrap_or(""),
    );
    match version {
        ReviewVersion::V1 => {
            if got != ("apiextensions.k8s.io/v1", "ConversionReview") {
                if got == ("apiextensions.k8s.io/v1beta1", "ConversionReview") {
                    return Err(failed(
                        "converting (v1beta1.ConversionReview) to (v1.ConversionReview): unknown conversion".into(),
                    ));
                }
                let (group_version, kind) = got;
                let shown = if group_version.contains('/') {
                    group_version.to_string()
                } else {
                    format!("/{group_version}")
                };
                return Err(failed(format!(
                    "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {shown}, Kind={kind}"
                )));
            }
        }
        ReviewVersion::V1beta1 => {
            if got == ("apiextensions.k8s.io/v1", "ConversionReview") {
                return Err(failed(
                    "converting (v1.ConversionReview) to (v1beta1.ConversionReview): unknown conversion".into(),
                ));
            }
        }
    }
    let response = &review["response"];
    if response.is_null() {
        return Err(failed("no response provided".into()));
    }
    if version == ReviewVersion::V1 {
        let answered = response["uid"].as_str().unwrap_or("");
        if answered != uid {
            return Err(failed(format!(
                "expected response.uid={}, got {}",
                crd_audit_engine::render::quote(uid),
                crd_audit_engine::render::quote(answered)
            )));
        }
    }
    let result = &response["result"];
    let status = result["status"].as_str().unwrap_or("");
    if status != "Success" {
        let message = result["message"].as_str().unwrap_or("");
        return Err(failed(if message.is_empty() {
            format!("response.result.status was '{status}', not 'Success'")
        } else {
            message.to_string()
        }));
    }
    let objects = response["convertedObjects"].as_array();
    let count = objects.map_or(0, Vec::len);
    if count != 1 {
        return Err(format!("{p} returned {count} objects, expected 1"));
    }
    let mut out = objects.and_then(|o| o.first()).cloned().unwrap_or_default();
    if !out.is_object() {
        return Err(format!("cannot unmarshal {} into an object", out));
    }
    if out.get("kind").is_none_or(|k| !k.is_string()) {
        return Err(format!("Object 'Kind' is missing in '{out}'"));
    }
    let received = out["apiVersion"].as_str().unwrap_or("");
    if received != desired {
        return Err(format!(
            "{p} returned invalid object at index 0: invalid groupVersion (expected {desired}, received {received})"
        ));
    }
    let (want, got) = (
        sent["kind"].as_str().unwrap_or(""),
        out["kind"].as_str().unwrap_or(""),
    );
    if want != got {
        return Err(format!(
            "{p} returned invalid object at index 0: invalid kind (expected {want}, received {got})"
        ));
    }
    crd_audit_engine::conversion::validate_converted(sent, &out)
        .map_err(|e| format!("{p} returned invalid object: {e}"))?;
    crd_audit_engine::conversion::restore_object_meta(sent, &mut out)
        .map_err(|e| format!("{p} returned invalid metadata: {e}"))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent() -> Value {
        json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
            "metadata": {"name": "a", "namespace": "ns1", "uid": "u1", "labels": {"app": "x"}},
            "spec": {"cronSpec": "* * * * *"}})
    }

    fn answer(version: &str, uid: &str, result: Value, objects: Value) -> Vec<u8> {
        json!({"apiVersion": version, "kind": "ConversionReview",
            "response": {"uid": uid, "result": result, "convertedObjects": objects}})
        .to_string()
        .into_bytes()
    }

    fn good() -> Value {
        json!({"apiVersion": "stable.example.com/v2", "kind": "CronTab",
            "metadata": {"name": "a", "namespace": "ns1", "uid": "u1", "labels": {"app": "x"}},
            "spec": {"schedule": "* * * * *"}})
    }

    const P1: &str = "conversion webhook for stable.example.com/v1, Kind=CronTab";
    const V1: &str = "apiextensions.k8s.io/v1";

    #[test]
    fn the_first_review_version_the_server_speaks_is_chosen() {
        let v = |l: &[&str]| {
            ReviewVersion::choose(&l.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(v(&["v1beta1", "v1"]), Ok(ReviewVersion::V1beta1));
        assert_eq!(v(&["v9", "v1"]), Ok(ReviewVersion::V1));
        assert_eq!(v(&["v1"]), Ok(ReviewVersion::V1));
        assert_eq!(
            v(&["v9"]),
            Err("no supported conversion review versions".into())
        );
        let r = request(ReviewVersion::V1, "id", "stable.example.com/v2", &sent());
        assert_eq!(r["request"]["objects"][0]["spec"]["cronSpec"], "* * * * *");
        assert_eq!(r["apiVersion"], V1);
    }

    #[test]
    fn a_sound_answer_is_the_converted_object() {
        let out = converted(
            ReviewVersion::V1,
            "id",
            &sent(),
            "stable.example.com/v2",
            &answer(V1, "id", json!({"status": "Success"}), json!([good()])),
        )
        .unwrap();
        assert_eq!(out, good());
        // v1beta1: neither the review's kind nor the uid is checked.
        let body = json!({"response": {"uid": "other", "result": {"status": "Success"},
            "convertedObjects": [good()]}})
        .to_string();
        assert!(
            converted(
                ReviewVersion::V1beta1,
                "id",
                &sent(),
                "stable.example.com/v2",
                body.as_bytes()
            )
            .is_ok()
        );
    }

    /// Each failure the API server finds in an answer, in its words.
    #[test]
    fn a_bad_answer_is_the_servers_error() {
        let to = "stable.example.com/v2";
        let ok = json!({"status": "Success"});
        let mut renamed = good();
        renamed["metadata"]["name"] = json!("b");
        let mut still_v1 = good();
        still_v1["apiVersion"] = json!("stable.example.com/v1");
        let mut other_kind = good();
        other_kind["kind"] = json!("Other");
        let cases: Vec<(Vec<u8>, String)> = vec![
            (
                br#"{"response": {"uid": "id"}}"#.to_vec(),
                format!(
                    "{P1} failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got /, Kind="
                ),
            ),
            (
                answer(V1, "other", ok.clone(), json!([good()])),
                format!("{P1} failed: expected response.uid=\"id\", got \"other\""),
            ),
            (
                json!({"apiVersion": V1, "kind": "ConversionReview", "response": null})
                    .to_string()
                    .into_bytes(),
                format!("{P1} failed: no response provided"),
            ),
            (
                answer(
                    V1,
                    "id",
                    json!({"status": "Failure", "message": "boom"}),
                    json!([]),
                ),
                format!("{P1} failed: boom"),
            ),
            (
                answer(V1, "id", json!({}), json!([])),
                format!("{P1} failed: response.result.status was '', not 'Success'"),
            ),
            (
                answer(
                    "apiextensions.k8s.io/v1beta1",
                    "id",
                    ok.clone(),
                    json!([good()]),
                ),
                format!(
                    "{P1} failed: converting (v1beta1.ConversionReview) to (v1.ConversionReview): unknown conversion"
                ),
            ),
            (
                answer(V1, "id", ok.clone(), json!([])),
                format!("{P1} returned 0 objects, expected 1"),
            ),
            (
                answer(V1, "id", ok.clone(), json!([good(), good()])),
                format!("{P1} returned 2 objects, expected 1"),
            ),
            (
                answer(V1, "id", ok.clone(), json!([still_v1])),
                format!(
                    "{P1} returned invalid object at index 0: invalid groupVersion (expected {to}, received stable.example.com/v1)"
                ),
            ),
            (
                answer(V1, "id", ok.clone(), json!([other_kind])),
                format!(
                    "{P1} returned invalid object at index 0: invalid kind (expected CronTab, received Other)"
                ),
            ),
            (
                answer(V1, "id", ok.clone(), json!([renamed])),
                format!("{P1} returned invalid object: must have the same name: a != b"),
            ),
        ];
        for (body, want) in cases {
            assert_eq!(
                converted(ReviewVersion::V1, "id", &sent(), to, &body),
                Err(want.clone()),
                "{want}"
            );
        }
        // No metadata at all: the name check comes before the metadata is restored, so the
        // server names the missing name (the e2e flaw `nometa` compares with its answer).
        let mut no_meta = good();
        no_meta.as_object_mut().unwrap().remove("metadata");
        assert_eq!(
            converted(
                ReviewVersion::V1,
                "id",
                &sent(),
                to,
                &answer(V1, "id", ok, json!([no_meta]))
            ),
            Err(format!(
                "{P1} returned invalid object: must have the same name: a != "
            ))
        );
    }

    #[test]
    fn an_http_error_is_worded_as_client_go_words_it() {
        assert_eq!(
            http_error(500, Some("text/plain"), b"oops\n"),
            "an error on the server (\"oops\") has prevented the request from succeeding"
        );
        assert_eq!(
            http_error(500, Some("application/json"), b"{}"),
            "an error on the server (\"unknown\") has prevented the request from succeeding"
        );
        assert_eq!(
            http_error(
                403,
                Some("application/json"),
                br#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"nope"}"#
            ),
            "nope"
        );
        assert_eq!(
            http_error(503, None, b""),
            "the server is currently unable to handle the request"
        );
        assert_eq!(
            http_error(418, None, b""),
            "the server responded with the status code 418 but did not return more information"
        );
    }
}
