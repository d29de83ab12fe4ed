//! The demo server on a real 3-master Redis Cluster (started by the test on
//! loopback ports): 50 concurrent requests at a bucket of 20 over 3
//! replicas admit exactly 20, and the keys' slots are asked of the cluster.

mod common;

use std::time::Duration;

use common::{client, fresh_keys, get_as};
use demo_server::redis_cluster::RedisCluster;
use demo_server::{Algorithm, FailMode, Policy, ServerConfig, Store, spawn};
use tokio::task::JoinSet;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_atomic_algorithm_admits_exactly_the_capacity_on_a_cluster() {
    let cluster =
        RedisCluster::start().expect("a 3-master cluster (redis-server and redis-cli on PATH)");
    let store = Store::redis(&cluster.url()).await.unwrap();
    assert!(store.describe().contains("cluster"), "{}", store.describe());
    let keys = fresh_keys();
    let mut slots = std::collections::BTreeSet::new();
    for algorithm in Algorithm::ALL
        .into_iter()
        .filter(|a| a.is_atomic() && a.limits_rate())
    {
        let policy = Policy::new(algorithm, 20, Duration::from_secs(86_400)).unwrap();
        // Closed: a check that misses its deadline answers 503, so a slow
        // first call (scripts loading on a loaded machine) cannot pass as
        // an admission.
        let config = ServerConfig::new(policy)
            .keys(keys.clone())
            .fail(FailMode::Closed);
        let mut replicas = Vec::new();
        for _ in 0..3 {
            let store = Store::redis(&cluster.url()).await.unwrap();
            replicas.push(spawn(config.clone(), store).await.unwrap());
        }
        let client = client();
        let id = format!("cluster-{}", algorithm.name());
        // Warm up: the first call loads the script on the node (NOSCRIPT path).
        get_as(&client, &replicas[0].url(), format!("warm-{id}").as_bytes()).await;
        let mut burst = JoinSet::new();
        for i in 0..50 {
            let (client, url, id) = (client.clone(), replicas[i % 3].url(), id.clone());
            burst.spawn(async move { get_as(&client, &url, id.as_bytes()).await.status });
        }
        let statuses = burst.join_all().await;
        let ok = statuses.iter().filter(|s| s.as_u16() == 200).count();
        let missed = statuses.iter().filter(|s| s.as_u16() == 503).count();
        assert_eq!(
            missed, 0,
            "{algorithm:?}: every check answered in time: {statuses:?}"
        );
        assert_eq!(ok, 20, "{algorithm:?} on a cluster: {statuses:?}");
    }
    // Verified, not assumed: each client's keys share one slot (their hash
    // tag), and the node holding a key is the one the slot map gives it.
    let found = cluster.keys(&format!("{}:*", keys.namespace()));
    let atomic = Algorithm::ALL
        .iter()
        .filter(|a| a.is_atomic() && a.limits_rate())
        .count();
    assert_eq!(
        found.len(),
        2 * atomic,
        "one key per algorithm and client (burst and warm-up): {found:?}"
    );
    for (port, key) in &found {
        let slot = cluster.keyslot(key).expect("CLUSTER KEYSLOT answers");
        let tag = &key[key.find('{').unwrap()..=key.find('}').unwrap()];
        assert_eq!(
            cluster.keyslot(tag),
            Some(slot),
            "{key}: the hash tag decides the slot"
        );
        assert_eq!(
            cluster.owner(slot),
            Some(*port),
            "{key} lives on the node owning slot {slot}"
        );
        slots.insert(slot);
    }
    assert!(
        slots.len() > 1,
        "different clients spread over slots: {slots:?}"
    );
}
