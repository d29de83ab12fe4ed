//! Garbage client ids (empty, 4 KiB, non-UTF-8, key-syntax look-alikes) get a
//! clean answer and their own quota: each lands on a distinct, fixed-shape,
//! expiring key, and none shows up verbatim in a key name.

mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::{Backend, client, fresh_keys, get_as};
use demo_server::{Algorithm, Policy, ServerConfig, spawn};

fn garbage_ids() -> Vec<Vec<u8>> {
    let mut long_b = vec![b'a'; 4095];
    long_b.push(b'b');
    vec![
        b"".to_vec(),
        vec![b'a'; 4096],
        long_b,
        b"\xff\xfe\xfd".to_vec(),
        b"\x80".to_vec(),
        b"}{".to_vec(),
        b"x}:v1:{y".to_vec(),
        b"*".to_vec(),
        b"a b\t".to_vec(),
        b"alice".to_vec(),
    ]
}

/// Capacity 1 per day: a second request of the same id is a 429, so a 200 on
/// every first request proves no two ids share a key.
async fn each_id_gets_its_own_quota(backend: &Backend) -> String {
    let keys = fresh_keys();
    let policy = Policy::new(Algorithm::TokenBucket, 1, Duration::from_secs(86_400)).unwrap();
    let server = spawn(
        ServerConfig::new(policy).keys(keys.clone()),
        backend.store().await,
    )
    .await
    .unwrap();
    let client = client();
    for id in garbage_ids() {
        let first = get_as(&client, &server.url(), &id).await;
        assert_eq!(
            first.status,
            200,
            "first request of {:?}",
            String::from_utf8_lossy(&id)
        );
        assert!(first.body.len() < 512, "the id is not echoed at length");
        let second = get_as(&client, &server.url(), &id).await;
        assert_eq!(second.status, 429, "same id, same key");
    }
    let stats = server.state().stats().snapshot();
    assert_eq!(stats.len(), garbage_ids().len());
    assert!(stats.keys().all(|label| label.len() <= 64));
    keys.namespace().to_owned()
}

#[tokio::test]
async fn garbage_ids_on_memory() {
    each_id_gets_its_own_quota(&Backend::memory()).await;
}

#[tokio::test]
async fn garbage_ids_on_redis_make_distinct_fixed_shape_expiring_keys() {
    let backend = Backend::redis();
    let namespace = each_id_gets_its_own_quota(&backend).await;
    let Backend::Redis(server) = &backend else {
        unreachable!()
    };
    let mut raw = redis::Client::open(server.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{namespace}:*"))
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(
        keys.iter().collect::<HashSet<_>>().len(),
        garbage_ids().len()
    );
    let prefix = format!("{namespace}:v1:{{");
    for key in &keys {
        let hash = key
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix("}:token-bucket"))
            .unwrap_or_else(|| panic!("unexpected key shape {key:?}"));
        assert_eq!(hash.len(), 32);
        assert!(hash.bytes().all(|b| b.is_ascii_hexdigit()));
        let ttl: i64 = redis::cmd("PTTL")
            .arg(key)
            .query_async(&mut raw)
            .await
            .unwrap();
        assert!(ttl > 0, "every key expires: {key} has PTTL {ttl}");
    }
}
