//! Every key every algorithm writes carries a TTL, no longer than the window
//! plus a little slack, whether the checks were admitted or rejected.

mod common;

use std::time::Duration;

use common::{Backend, fresh_keys};
use demo_server::{Algorithm, Policy};

#[tokio::test]
async fn every_key_expires() {
    let backend = Backend::redis();
    let Backend::Redis(server) = &backend else {
        unreachable!()
    };
    let store = backend.store().await;
    let keys = fresh_keys();
    let window = Duration::from_secs(60);
    for algorithm in Algorithm::ALL {
        let policy = Policy::new(algorithm, 3, window).unwrap();
        let key = keys.key("ttl", algorithm);
        for _ in 0..5 {
            store.check(&policy, &key).await.unwrap();
        }
    }
    let mut raw = redis::Client::open(server.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let written: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{}:*", keys.namespace()))
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(written.len(), Algorithm::ALL.len(), "{written:?}");
    for key in written {
        let ttl: i64 = redis::cmd("PTTL")
            .arg(&key)
            .query_async(&mut raw)
            .await
            .unwrap();
        // Slack: one window (sliding-window keeps "previous") plus one second.
        let max = 2 * window.as_millis() as i64 + 1000;
        assert!(ttl > 0 && ttl <= max, "{key}: PTTL {ttl}");
    }
}
