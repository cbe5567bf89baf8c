//! Talking to a cluster, shared by the one-shot commands and the operator: the kube client
//! from any kubeconfig (`client`), the resources read (`resources`), and paginated LISTs
//! with retry for the one-shot commands (`reader`). Nothing here judges anything.

pub mod client;
pub mod reader;
pub mod resources;
