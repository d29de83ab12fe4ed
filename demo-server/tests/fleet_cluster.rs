//! The fleet store on a real 3-master Redis Cluster (started on loopback
//! ports by the test): scripts run on the node owning each scope, both keys
//! of a scope sit in one slot (asked of the cluster, not assumed), and a
//! pause published through one member holds for another.

mod fleet_support;

use std::collections::BTreeSet;
use std::time::Duration;

use courteous::fleet::Reservation;
use demo_server::redis_cluster::RedisCluster;
use fleet_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scopes_spread_over_the_cluster_and_each_keeps_its_keys_in_one_slot() {
    let cluster =
        RedisCluster::start().expect("a 3-master cluster (redis-server and redis-cli on PATH)");
    let (a, b) = (member(&cluster.url()).await, member(&cluster.url()).await);
    assert!(a.address().starts_with("cluster "), "{}", a.address());
    let mut scopes = Vec::new();
    for i in 0..12 {
        let s = scope(&format!("cluster{i}"));
        assert!(matches!(
            a.reserve(&s).await.unwrap(),
            Reservation::Go { probe: true, .. }
        ));
        a.publish(&s, &ok_lesson(20, 1, 19)).await.unwrap();
        scopes.push(s);
    }
    // A refusal seen by `a` pauses `b` on the same scope.
    a.publish(&scopes[0], &refusal(Duration::from_millis(300)))
        .await
        .unwrap();
    let after = go_after(b.reserve(&scopes[0]).await.unwrap());
    assert!(after >= Duration::from_millis(250), "{after:?}");

    let found = cluster.keys("courteous:v1:*");
    assert_eq!(
        found.len(),
        2 * scopes.len(),
        "a state and a members key per scope: {found:?}"
    );
    let mut nodes = BTreeSet::new();
    for (port, key) in &found {
        let slot = cluster.keyslot(key).expect("CLUSTER KEYSLOT answers");
        let tag = &key[key.find('{').unwrap()..=key.find('}').unwrap()];
        assert_eq!(
            cluster.keyslot(tag),
            Some(slot),
            "{key}: its hash tag decides its slot"
        );
        assert_eq!(
            cluster.owner(slot),
            Some(*port),
            "{key} lives where the slot map says"
        );
        let sibling = if key.ends_with(":state") {
            key.replace(":state", ":members")
        } else {
            key.replace(":members", ":state")
        };
        assert_eq!(
            cluster.keyslot(&sibling),
            Some(slot),
            "both keys of a scope in one slot"
        );
        nodes.insert(*port);
    }
    assert!(
        nodes.len() > 1,
        "12 scopes spread over more than one master: {nodes:?}"
    );
}
