//! Structural schemas: the conversion of a CRD version schema into the upstream
//! `Structural` form, the `NonStructuralSchema` rules, and the CRD create-time schema checks.
