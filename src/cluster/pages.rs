//! A LIST read page by page, for the operator's one-off reads of many objects: each page is
//! handed over item by item and dropped before the next is asked for, so that only one page
//! is held at a time. The first error ends the read (the caller decides what a failed read
//! means); the one-shot commands' reads, with their retries, are in `reader`.

use kube::api::{Api, DynamicObject, ListParams};

/// Every object `params` selects (its `limit` is the page size), in the server's order.
pub async fn each_listed(
    api: &Api<DynamicObject>,
    mut params: ListParams,
    mut each: impl FnMut(DynamicObject),
) -> Result<(), kube::Error> {
    loop {
        let page = api.list(&params).await?;
        let next = page.metadata.continue_.filter(|c| !c.is_empty());
        page.items.into_iter().for_each(&mut each);
        match next {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(()),
        }
    }
}
