//! [`GitHub`] as a preset: the classifier of [`classify`](crate::classify),
//! scoped by resource.

pub use crate::classify::GitHub;

use super::{Settings, adapters};

impl GitHub {
    /// The quota a request draws on, as GitHub's `x-ratelimit-resource`
    /// names it, from its path: `code_search` (`/search/code`), `search`
    /// (other `/search/…`), `graphql` (`/graphql`), else `core`. GitHub
    /// counts each separately, so the preset's scope is the origin and this.
    pub fn resource(url: &reqwest::Url) -> &'static str {
        let path = url.path();
        let under = |prefix: &str| {
            path.strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        };
        if under("/search/code") {
            "code_search"
        } else if under("/search") {
            "search"
        } else if under("/graphql") {
            "graphql"
        } else {
            "core"
        }
    }
}

/// The origin and the resource: `https://api.github.com core`.
fn scope(request: &reqwest::Request) -> crate::Scope {
    let origin = crate::service::classify::origin_key(request.url());
    crate::Scope::new(format!("{origin} {}", GitHub::resource(request.url())))
}

impl Settings for GitHub {
    fn scope(&self) -> Option<fn(&reqwest::Request) -> crate::Scope> {
        Some(scope)
    }
}

adapters!(GitHub, "GitHub");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_by_path() {
        let resource = |url: &str| GitHub::resource(&url.parse().unwrap());
        assert_eq!(
            resource("https://api.github.com/search/code?q=x"),
            "code_search"
        );
        assert_eq!(
            resource("https://api.github.com/search/issues?q=x"),
            "search"
        );
        assert_eq!(resource("https://api.github.com/graphql"), "graphql");
        assert_eq!(resource("https://api.github.com/searching"), "core");
        assert_eq!(resource("https://api.github.com/repos/o/r"), "core");
        let request = reqwest::Request::new(
            http::Method::GET,
            "https://api.github.com/search/issues".parse().unwrap(),
        );
        assert_eq!(scope(&request).as_str(), "https://api.github.com search");
    }
}
