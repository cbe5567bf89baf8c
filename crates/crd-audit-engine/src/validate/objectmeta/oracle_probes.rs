//! ObjectMeta decoding and validation against probes run through the reference oracle.

use super::tests::messages;
use super::*;
use crate::cause::Path;
use serde_json::{Value, json};

/// Probes run through the reference oracle (k8s.io/* 0.36.4): (where, input, expected).
const ORACLE_PROBES: &[(&str, &str, &str)] = &[
    (
        "top",
        r#""x""#,
        r#"{"requestError": "json: cannot unmarshal string into Go value of type v1.ObjectMeta"}"#,
    ),
    (
        "top",
        r#"5"#,
        r#"{"requestError": "json: cannot unmarshal number into Go value of type v1.ObjectMeta"}"#,
    ),
    (
        "top",
        r#"[]"#,
        r#"{"requestError": "json: cannot unmarshal array into Go value of type v1.ObjectMeta"}"#,
    ),
    (
        "top",
        r#"true"#,
        r#"{"requestError": "json: cannot unmarshal bool into Go value of type v1.ObjectMeta"}"#,
    ),
    (
        "top",
        r#"null"#,
        r#"{"errors": ["metadata.name: Required value: name or generateName is required"]}"#,
    ),
    (
        "top",
        r#"{}"#,
        r#"{"errors": ["metadata.name: Required value: name or generateName is required"]}"#,
    ),
    (
        "top",
        r#"{"name":"a","labels":{"a":5}}"#,
        r#"{"requestError": "json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string"}"#,
    ),
    (
        "top",
        r#"{"name":"a","labels":{"a":null}}"#,
        r#"{"errors": []}"#,
    ),
    (
        "top",
        r#"{"name":"a","annotations":[1]}"#,
        r#"{"requestError": "json: cannot unmarshal array into Go struct field ObjectMeta.annotations of type map[string]string"}"#,
    ),
    (
        "top",
        r#"{"name":"a","generation":1.5}"#,
        r#"{"requestError": "json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.generation of type int64"}"#,
    ),
    (
        "top",
        r#"{"name":"a","generation":"1"}"#,
        r#"{"requestError": "json: cannot unmarshal string into Go struct field ObjectMeta.generation of type int64"}"#,
    ),
    (
        "top",
        r#"{"name":"a","generation":1e+21}"#,
        r#"{"requestError": "json: cannot unmarshal number 1e+21 into Go struct field ObjectMeta.generation of type int64"}"#,
    ),
    (
        "top",
        r#"{"name":"a","generation":1e+19}"#,
        r#"{"requestError": "json: cannot unmarshal number 10000000000000000000 into Go struct field ObjectMeta.generation of type int64"}"#,
    ),
    (
        "top",
        r#"{"name":"a","deletionGracePeriodSeconds":true}"#,
        r#"{"requestError": "json: cannot unmarshal bool into Go struct field ObjectMeta.deletionGracePeriodSeconds of type int64"}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":5}"#,
        r#"{"requestError": "json: cannot unmarshal number into Go struct field ObjectMeta.creationTimestamp of type string"}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":{}}"#,
        r#"{"requestError": "json: cannot unmarshal object into Go struct field ObjectMeta.creationTimestamp of type string"}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":"2020-13-01T00:00:00Z"}"#,
        r#"{"requestError": "parsing time \"2020-13-01T00:00:00Z\": month out of range"}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":"2020-02-30T00:00:00Z"}"#,
        r#"{"requestError": "parsing time \"2020-02-30T00:00:00Z\": day out of range"}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":"2020-01-01T24:00:00Z"}"#,
        r#"{"requestError": "parsing time \"2020-01-01T24:00:00Z\": hour out of range"}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":"2020-01-01T00:00:00"}"#,
        r#"{"requestError": "parsing time \"2020-01-01T00:00:00\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\" as \"Z07:00\""}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":"2020-01-01T00:00:00Zx"}"#,
        r#"{"requestError": "parsing time \"2020-01-01T00:00:00Zx\": extra text: \"x\""}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":"2020-01-01 00:00:00Z"}"#,
        r#"{"requestError": "parsing time \"2020-01-01 00:00:00Z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \" 00:00:00Z\" as \"T\""}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":"2020-01-01T00:00:00.123+25:00"}"#,
        r#"{"requestError": "parsing time \"2020-01-01T00:00:00.123+25:00\": time zone offset hour out of range"}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":"\u00e4\u0001\"x"}"#,
        r#"{"requestError": "parsing time \"\\xc3\\xa4\\x01\\\"x\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\\xc3\\xa4\\x01\\\"x\" as \"2006\""}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":""}"#,
        r#"{"requestError": "parsing time \"\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\" as \"2006\""}"#,
    ),
    (
        "top",
        r#"{"name":"a","deletionTimestamp":"x","annotations":5}"#,
        r#"{"requestError": "parsing time \"x\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"x\" as \"2006\""}"#,
    ),
    (
        "top",
        r#"{"name":"a","annotations":5,"labels":6}"#,
        r#"{"requestError": "json: cannot unmarshal number into Go struct field ObjectMeta.annotations of type map[string]string"}"#,
    ),
    (
        "top",
        r#"{"name":"a","ownerReferences":[5]}"#,
        r#"{"requestError": "json: cannot unmarshal number into Go struct field ObjectMeta.ownerReferences of type v1.OwnerReference"}"#,
    ),
    (
        "top",
        r#"{"name":"a","ownerReferences":{}}"#,
        r#"{"requestError": "json: cannot unmarshal object into Go struct field ObjectMeta.ownerReferences of type []v1.OwnerReference"}"#,
    ),
    (
        "top",
        r#"{"name":"a","ownerReferences":[{"name":5}]}"#,
        r#"{"requestError": "json: cannot unmarshal number into Go struct field OwnerReference.ownerReferences.name of type string"}"#,
    ),
    (
        "top",
        r#"{"name":"a","ownerReferences":[{"controller":"yes"}]}"#,
        r#"{"requestError": "json: cannot unmarshal string into Go struct field OwnerReference.ownerReferences.controller of type bool"}"#,
    ),
    (
        "top",
        r#"{"name":"a","finalizers":"x"}"#,
        r#"{"requestError": "json: cannot unmarshal string into Go struct field ObjectMeta.finalizers of type []string"}"#,
    ),
    (
        "top",
        r#"{"name":"a","finalizers":[1]}"#,
        r#"{"requestError": "json: cannot unmarshal number into Go struct field ObjectMeta.finalizers of type string"}"#,
    ),
    (
        "top",
        r#"{"name":"a","managedFields":[{"time":"bad"}]}"#,
        r#"{"requestError": "parsing time \"bad\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"bad\" as \"2006\""}"#,
    ),
    (
        "top",
        r#"{"name":"a","managedFields":[{"fieldsV1":5,"operation":3}]}"#,
        r#"{"requestError": "json: cannot unmarshal number into Go struct field ManagedFieldsEntry.managedFields.operation of type v1.ManagedFieldsOperationType"}"#,
    ),
    (
        "top",
        r#"{"name":"a","uid":5}"#,
        r#"{"requestError": "json: cannot unmarshal number into Go struct field ObjectMeta.uid of type types.UID"}"#,
    ),
    (
        "top",
        r#"{"name":"a","managedFields":[{"manager":"a\u0007b\u00adc","operation":"Apply","fieldsType":"X","subresource":"ssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss"}]}"#,
        r#"{"errors": ["metadata.managedFields[0].fieldsType: Invalid value: \"X\": must be `FieldsV1`", "metadata.managedFields[0].manager: Invalid value: \"a\\ab\\u00adc\": invalid character U+0007 (at position 1)", "metadata.managedFields[0].manager: Invalid value: \"a\\ab\\u00adc\": invalid character U+00AD (at position 3)", "metadata.managedFields[0].subresource: Too long: may not be more than 256 bytes"]}"#,
    ),
    ("top", r#"{"name":"a","Name":5}"#, r#"{"errors": []}"#),
    (
        "top",
        r#"{"name":"a","generation":-5}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":"x"}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: \"x\": json: cannot unmarshal string into Go value of type v1.ObjectMeta"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":5}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: 5: json: cannot unmarshal number into Go value of type v1.ObjectMeta"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":[]}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: []: json: cannot unmarshal array into Go value of type v1.ObjectMeta"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":true}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: true: json: cannot unmarshal bool into Go value of type v1.ObjectMeta"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":null}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{}}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","labels":{"a":5}}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"labels\":{\"a\":5},\"name\":\"a\"}: json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","labels":{"a":null}}}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","annotations":[1]}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"annotations\":[1],\"name\":\"a\"}: json: cannot unmarshal array into Go struct field ObjectMeta.annotations of type map[string]string"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","generation":1.5}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"generation\":1.5,\"name\":\"a\"}: json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.generation of type int64"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","generation":"1"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"generation\":\"1\",\"name\":\"a\"}: json: cannot unmarshal string into Go struct field ObjectMeta.generation of type int64"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","generation":1e+21}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"generation\":1e+21,\"name\":\"a\"}: json: cannot unmarshal number 1e+21 into Go struct field ObjectMeta.generation of type int64"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","generation":1e+19}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"generation\":10000000000000000000,\"name\":\"a\"}: json: cannot unmarshal number 10000000000000000000 into Go struct field ObjectMeta.generation of type int64"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","deletionGracePeriodSeconds":true}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"deletionGracePeriodSeconds\":true,\"name\":\"a\"}: json: cannot unmarshal bool into Go struct field ObjectMeta.deletionGracePeriodSeconds of type int64"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":5}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":5,\"name\":\"a\"}: json: cannot unmarshal number into Go struct field ObjectMeta.creationTimestamp of type string"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":{}}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":{},\"name\":\"a\"}: json: cannot unmarshal object into Go struct field ObjectMeta.creationTimestamp of type string"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":"2020-13-01T00:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-13-01T00:00:00Z\",\"name\":\"a\"}: parsing time \"2020-13-01T00:00:00Z\": month out of range"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":"2020-02-30T00:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-02-30T00:00:00Z\",\"name\":\"a\"}: parsing time \"2020-02-30T00:00:00Z\": day out of range"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":"2020-01-01T24:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T24:00:00Z\",\"name\":\"a\"}: parsing time \"2020-01-01T24:00:00Z\": hour out of range"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":"2020-01-01T00:00:00"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:00\",\"name\":\"a\"}: parsing time \"2020-01-01T00:00:00\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\" as \"Z07:00\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":"2020-01-01T00:00:00Zx"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:00Zx\",\"name\":\"a\"}: parsing time \"2020-01-01T00:00:00Zx\": extra text: \"x\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":"2020-01-01 00:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01 00:00:00Z\",\"name\":\"a\"}: parsing time \"2020-01-01 00:00:00Z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \" 00:00:00Z\" as \"T\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":"2020-01-01T00:00:00.123+25:00"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:00.123+25:00\",\"name\":\"a\"}: parsing time \"2020-01-01T00:00:00.123+25:00\": time zone offset hour out of range"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":"\u00e4\u0001\"x"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"\u00e4\\u0001\\\"x\",\"name\":\"a\"}: parsing time \"\\xc3\\xa4\\x01\\\"x\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\\xc3\\xa4\\x01\\\"x\" as \"2006\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":""}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"\",\"name\":\"a\"}: parsing time \"\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\" as \"2006\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","deletionTimestamp":"x","annotations":5}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"annotations\":5,\"deletionTimestamp\":\"x\",\"name\":\"a\"}: parsing time \"x\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"x\" as \"2006\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","annotations":5,"labels":6}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"annotations\":5,\"labels\":6,\"name\":\"a\"}: json: cannot unmarshal number into Go struct field ObjectMeta.annotations of type map[string]string"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","ownerReferences":[5]}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"name\":\"a\",\"ownerReferences\":[5]}: json: cannot unmarshal number into Go struct field ObjectMeta.ownerReferences of type v1.OwnerReference"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","ownerReferences":{}}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"name\":\"a\",\"ownerReferences\":{}}: json: cannot unmarshal object into Go struct field ObjectMeta.ownerReferences of type []v1.OwnerReference"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","ownerReferences":[{"name":5}]}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"name\":\"a\",\"ownerReferences\":[{\"name\":5}]}: json: cannot unmarshal number into Go struct field OwnerReference.ownerReferences.name of type string"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","ownerReferences":[{"controller":"yes"}]}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"name\":\"a\",\"ownerReferences\":[{\"controller\":\"yes\"}]}: json: cannot unmarshal string into Go struct field OwnerReference.ownerReferences.controller of type bool"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","finalizers":"x"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"finalizers\":\"x\",\"name\":\"a\"}: json: cannot unmarshal string into Go struct field ObjectMeta.finalizers of type []string"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","finalizers":[1]}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"finalizers\":[1],\"name\":\"a\"}: json: cannot unmarshal number into Go struct field ObjectMeta.finalizers of type string"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","managedFields":[{"time":"bad"}]}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"managedFields\":[{\"time\":\"bad\"}],\"name\":\"a\"}: parsing time \"bad\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"bad\" as \"2006\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","managedFields":[{"fieldsV1":5,"operation":3}]}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"managedFields\":[{\"fieldsV1\":5,\"operation\":3}],\"name\":\"a\"}: json: cannot unmarshal number into Go struct field ManagedFieldsEntry.managedFields.operation of type v1.ManagedFieldsOperationType"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","uid":5}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"name\":\"a\",\"uid\":5}: json: cannot unmarshal number into Go struct field ObjectMeta.uid of type types.UID"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","managedFields":[{"manager":"a\u0007b\u00adc","operation":"Apply","fieldsType":"X","subresource":"ssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss"}]}}"#,
        r#"{"errors": ["spec.t.metadata.managedFields[0].fieldsType: Invalid value: \"X\": must be `FieldsV1`", "spec.t.metadata.managedFields[0].manager: Invalid value: \"a\\ab\\u00adc\": invalid character U+0007 (at position 1)", "spec.t.metadata.managedFields[0].manager: Invalid value: \"a\\ab\\u00adc\": invalid character U+00AD (at position 3)", "spec.t.metadata.managedFields[0].subresource: Too long: may not be more than 256 bytes"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","Name":5}}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","generation":-5}}"#,
        r#"{"errors": ["spec.t.metadata.generation: Invalid value: -5: must be greater than or equal to 0"]}"#,
    ),
    (
        "top",
        r#"{"generateName":"a_","name":"x"}"#,
        r#"{"errors": ["metadata.generateName: Invalid value: \"a_\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","labels":{"/a":"","a/":"","A.b/c":"","pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/x":"","UP.io/x":"","":"","a/b":"-x"}}"#,
        r#"{"errors": ["metadata.labels: Invalid value: \"\": name part must be non-empty", "metadata.labels: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')", "metadata.labels: Invalid value: \"-x\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')", "metadata.labels: Invalid value: \"/a\": prefix part must be non-empty", "metadata.labels: Invalid value: \"A.b/c\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')", "metadata.labels: Invalid value: \"UP.io/x\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')", "metadata.labels: Invalid value: \"a/\": name part must be non-empty", "metadata.labels: Invalid value: \"a/\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')", "metadata.labels: Invalid value: \"pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/x\": prefix part must be no more than 253 bytes"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","annotations":{"\u0130":"","\u212a":"","UP.io/x":"","a\u00e4":"","A/B/C":"","/":""}}"#,
        r#"{"errors": ["metadata.annotations: Invalid value: \"/\": name part must be non-empty", "metadata.annotations: Invalid value: \"/\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')", "metadata.annotations: Invalid value: \"/\": prefix part must be non-empty", "metadata.annotations: Invalid value: \"A/B/C\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')", "metadata.annotations: Invalid value: \"a\u00e4\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","ownerReferences":[{"apiVersion":"v1","kind":"Event","name":"n","uid":"u"},{"apiVersion":"a/b/c","kind":"","name":"n","uid":"u","blockOwnerDeletion":true,"controller":false},{"apiVersion":"v1/","kind":"K","name":"<&>","uid":"u","controller":true}]}"#,
        r#"{"errors": ["metadata.ownerReferences.apiVersion: Invalid value: \"a/b/c\": version must not be empty", "metadata.ownerReferences.apiVersion: Invalid value: \"v1/\": version must not be empty", "metadata.ownerReferences.kind: Invalid value: \"\": must not be empty", "metadata.ownerReferences: Invalid value: {\"apiVersion\":\"v1\",\"kind\":\"Event\",\"name\":\"n\",\"uid\":\"u\"}: /v1, Kind=Event is disallowed from being an owner"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","ownerReferences":[{"apiVersion":"/","kind":"K","name":"a","uid":"u","controller":true},{"apiVersion":"/v1","kind":"K","name":"b","uid":"u","controller":true},{"apiVersion":"g/v","kind":"K","name":"c","uid":"u","controller":true}]}"#,
        r#"{"errors": ["metadata.ownerReferences.apiVersion: Invalid value: \"/\": version must not be empty", "metadata.ownerReferences: Invalid value: [{\"apiVersion\":\"/\",\"kind\":\"K\",\"name\":\"a\",\"uid\":\"u\",\"controller\":true},{\"apiVersion\":\"/v1\",\"kind\":\"K\",\"name\":\"b\",\"uid\":\"u\",\"controller\":true},{\"apiVersion\":\"g/v\",\"kind\":\"K\",\"name\":\"c\",\"uid\":\"u\",\"controller\":true}]: Only one reference can have Controller set to true. Found \"true\" in references for K/a and K/b", "metadata.ownerReferences: Invalid value: [{\"apiVersion\":\"/\",\"kind\":\"K\",\"name\":\"a\",\"uid\":\"u\",\"controller\":true},{\"apiVersion\":\"/v1\",\"kind\":\"K\",\"name\":\"b\",\"uid\":\"u\",\"controller\":true},{\"apiVersion\":\"g/v\",\"kind\":\"K\",\"name\":\"c\",\"uid\":\"u\",\"controller\":true}]: Only one reference can have Controller set to true. Found \"true\" in references for K/a and K/c"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","finalizers":["orphan","foregroundDeletion","kubernetes.io/x","x/y/z","Ab_"]}"#,
        r#"{"errors": ["metadata.finalizers: Invalid value: \"Ab_\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')", "metadata.finalizers: Invalid value: \"x/y/z\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')", "metadata.finalizers: Invalid value: [\"orphan\",\"foregroundDeletion\",\"kubernetes.io/x\",\"x/y/z\",\"Ab_\"]: finalizer orphan and foregroundDeletion cannot be both set"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","namespace":"a.b"}"#,
        r#"{"errors": ["metadata.namespace: Invalid value: \"a.b\": must not contain dots"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","namespace":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}"#,
        r#"{"errors": ["metadata.namespace: Invalid value: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": must be no more than 63 characters"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","namespace":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}"#,
        r#"{"errors": ["metadata.namespace: Invalid value: \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')", "metadata.namespace: Invalid value: \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\": must be no more than 63 characters"]}"#,
    ),
    (
        "top",
        r#"{"name":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}"#,
        r#"{"errors": []}"#,
    ),
    (
        "top",
        r#"{"name":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}"#,
        r#"{"errors": ["metadata.name: Invalid value: \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')", "metadata.name: Invalid value: \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\": must be no more than 253 characters"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"","kind":""}"#,
        r#"{"errors": ["spec.t.apiVersion: Invalid value: \"\": must not be empty", "spec.t.kind: Invalid value: \"\": must not be empty"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"a/b/c","kind":"foo.bar"}"#,
        r#"{"errors": ["spec.t.apiVersion: Invalid value: \"a/b/c\": unexpected GroupVersion string: a/b/c", "spec.t.kind: Invalid value: \"foo.bar\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"KKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKK"}"#,
        r#"{"errors": ["spec.t.kind: Invalid value: \"KKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKK\": may have mixed case, but should otherwise match: must be no more than 63 characters"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"1abc"}"#,
        r#"{"errors": ["spec.t.kind: Invalid value: \"1abc\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":null}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":".","generateName":"a/%"}}"#,
        r#"{"errors": ["spec.t.metadata.generateName: Invalid value: \"a/%\": may not contain '%'", "spec.t.metadata.generateName: Invalid value: \"a/%\": may not contain '/'", "spec.t.metadata.name: Invalid value: \".\": may not be '.'"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"..."}}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a/%"}}"#,
        r#"{"errors": ["spec.t.metadata.name: Invalid value: \"a/%\": may not contain '%'", "spec.t.metadata.name: Invalid value: \"a/%\": may not contain '/'"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":".."}}"#,
        r#"{"errors": ["spec.t.metadata.name: Invalid value: \"..\": may not be '..'"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"generateName":"-"}}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"namespace":"a.b","finalizers":["orphan","foregroundDeletion"]}}"#,
        r#"{"errors": ["spec.t.metadata.finalizers: Invalid value: [\"orphan\",\"foregroundDeletion\"]: finalizer orphan and foregroundDeletion cannot be both set", "spec.t.metadata.namespace: Invalid value: \"a.b\": must not contain dots"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Event"}]}}"#,
        r#"{"errors": ["spec.t.metadata.ownerReferences.name: Invalid value: \"\": must not be empty", "spec.t.metadata.ownerReferences.uid: Invalid value: \"\": must not be empty", "spec.t.metadata.ownerReferences: Invalid value: {\"apiVersion\":\"v1\",\"kind\":\"Event\",\"name\":\"\",\"uid\":\"\"}: /v1, Kind=Event is disallowed from being an owner"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:00:00Z","labels":{}}}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":null}}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-1-01T00:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-1-01T00:00:00Z\"}: parsing time \"2020-1-01T00:00:00Z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"1-01T00:00:00Z\" as \"01\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T0:00:00Z"}}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:00:00,5-01:30"}}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:00:00+0130"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:00+0130\"}: parsing time \"2020-01-01T00:00:00+0130\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"+0130\" as \"Z07:00\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:00:00 01:30"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:00 01:30\"}: parsing time \"2020-01-01T00:00:00 01:30\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \" 01:30\" as \"Z07:00\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:00:60Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:60Z\"}: parsing time \"2020-01-01T00:00:60Z\": second out of range"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:61:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:61:00Z\"}: parsing time \"2020-01-01T00:61:00Z\": minute out of range"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"20a0-01-01T00:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"20a0-01-01T00:00:00Z\"}: parsing time \"20a0-01-01T00:00:00Z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"20a0-01-01T00:00:00Z\" as \"2006\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-00-01T00:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-00-01T00:00:00Z\"}: parsing time \"2020-00-01T00:00:00Z\": month out of range"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-00T00:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-00T00:00:00Z\"}: parsing time \"2020-01-00T00:00:00Z\": day out of range"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:00:00+01:61"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:00+01:61\"}: parsing time \"2020-01-01T00:00:00+01:61\": time zone offset minute out of range"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:00:00+0a:00"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:00+0a:00\"}: parsing time \"2020-01-01T00:00:00+0a:00\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"+0a:00\" as \"Z07:00\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:00:00*01:00"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:00*01:00\"}: parsing time \"2020-01-01T00:00:00*01:00\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"*01:00\" as \"Z07:00\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01t00:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01t00:00:00Z\"}: parsing time \"2020-01-01t00:00:00Z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"t00:00:00Z\" as \"T\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:00:00.Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:00.Z\"}: parsing time \"2020-01-01T00:00:00.Z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \".Z\" as \"Z07:00\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2021-02-29T00:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2021-02-29T00:00:00Z\"}: parsing time \"2021-02-29T00:00:00Z\": day out of range"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:00:00z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:00z\"}: parsing time \"2020-01-01T00:00:00z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"z\" as \"Z07:00\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"+020-01-01T00:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"+020-01-01T00:00:00Z\"}: parsing time \"+020-01-01T00:00:00Z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"+020-01-01T00:00:00Z\" as \"2006\""}"#,
    ),
    (
        "top",
        r#"{"name":"x","annotations":5,"creationTimestamp":5}"#,
        r#"{"requestError": "json: cannot unmarshal number into Go struct field ObjectMeta.creationTimestamp of type string"}"#,
    ),
    (
        "top",
        r#"{"name":"x","managedFields":[{"time":5}]}"#,
        r#"{"requestError": "json: cannot unmarshal number into Go struct field ManagedFieldsEntry.managedFields.time of type string"}"#,
    ),
    (
        "top",
        r#"{"name":"x","annotations":5,"managedFields":[{"operation":3,"time":"x"}]}"#,
        r#"{"requestError": "parsing time \"x\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"x\" as \"2006\""}"#,
    ),
    (
        "top",
        r#"{"name":"x","ownerReferences":[null,{"apiVersion":"v1","kind":"K","name":"n","uid":"u"}]}"#,
        r#"{"errors": ["metadata.ownerReferences.apiVersion: Invalid value: \"\": version must not be empty", "metadata.ownerReferences.kind: Invalid value: \"\": must not be empty", "metadata.ownerReferences.name: Invalid value: \"\": must not be empty", "metadata.ownerReferences.uid: Invalid value: \"\": must not be empty"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","finalizers":[null,"a"]}"#,
        r#"{"errors": ["metadata.finalizers: Invalid value: \"\": name part must be non-empty", "metadata.finalizers: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","labels":{"a":{}},"annotations":{"b":[]}}"#,
        r#"{"requestError": "json: cannot unmarshal array into Go struct field ObjectMeta.annotations of type string"}"#,
    ),
    (
        "top",
        r#"{"name":"x","generation":3.0,"deletionGracePeriodSeconds":-1}"#,
        r#"{"errors": []}"#,
    ),
    (
        "top",
        r#"{"name":"x","ownerReferences":[{"apiVersion":"v1","kind":"K","name":"n","uid":"u","controller":null}],"managedFields":null,"labels":null}"#,
        r#"{"errors": []}"#,
    ),
    (
        "top",
        r#"{"name":"x","generateName":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}"#,
        r#"{"errors": []}"#,
    ),
    (
        "top",
        r#"{"name":"x","labels":{"a":"x<y"}}"#,
        r#"{"errors": ["metadata.labels: Invalid value: \"x<y\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","ownerReferences":[{"apiVersion":"v1","kind":"Event","name":"<&>\u2028","uid":"u"}]}"#,
        r#"{"errors": ["metadata.ownerReferences: Invalid value: {\"apiVersion\":\"v1\",\"kind\":\"Event\",\"name\":\"\\u003c\\u0026\\u003e\\u2028\",\"uid\":\"u\"}: /v1, Kind=Event is disallowed from being an owner"]}"#,
    ),
];

#[test]
fn oracle_probes_are_reproduced() {
    let path = Path::new("spec").child("t");
    for (where_, input, expected) in ORACLE_PROBES {
        let input: Value = serde_json::from_str(input).unwrap();
        let expected: Value = serde_json::from_str(expected).unwrap();
        let (req, got) = if *where_ == "top" {
            let obj = json!({ "metadata": input });
            (
                request_error(&obj),
                validate_object_meta(obj.get("metadata").unwrap(), true),
            )
        } else {
            (
                embedded_request_error(&input, &path),
                validate_embedded_resource(&input, &path),
            )
        };
        match expected.get("requestError").and_then(Value::as_str) {
            Some(want) => assert_eq!(req.as_deref(), Some(want), "{input}"),
            None => {
                assert_eq!(req, None, "{input}");
                let want: Vec<String> = expected["errors"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| m.as_str().unwrap().to_string())
                    .collect();
                assert_eq!(messages(&got), want, "{input}");
            }
        }
    }
}
