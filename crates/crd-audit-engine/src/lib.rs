pub mod cause;
pub mod cel;
pub mod crd;
pub mod diff;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod fuzz;
pub mod go;
pub mod gofmt;
pub mod guard;
pub mod k8s;
pub mod load;
pub mod schema;
pub mod structural;
#[cfg(any(test, feature = "internals"))]
#[doc(hidden)]
pub mod testing;
pub mod validate;
