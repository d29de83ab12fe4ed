//! Running replicas: bind, serve, stop.

use std::future::Future;
use std::io;
use std::net::SocketAddr;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::Store;
use crate::app::{AppState, ServerConfig, app};

/// Serve one replica on `listener` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let service = app(state).into_make_service_with_connect_info::<SocketAddr>();
    axum::serve(listener, service)
        .with_graceful_shutdown(shutdown)
        .await
}

/// A replica running on a background task. Dropping it stops the replica.
#[derive(Debug)]
pub struct RunningServer {
    addr: SocketAddr,
    state: AppState,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<io::Result<()>>,
}

/// Start a replica of `config` over `store` on an ephemeral loopback port.
/// Start several over clones of one [`Store`] (or one Redis URL) to share a quota.
///
/// ```no_run
/// # async fn demo() -> std::io::Result<()> {
/// use demo_server::{spawn, Algorithm, Policy, ServerConfig, Store};
/// let policy = Policy::bucket(Algorithm::TokenBucket, 20, 20.0).unwrap();
/// let store = Store::memory();
/// let replica = spawn(ServerConfig::new(policy), store.clone()).await?;
/// println!("listening on {}", replica.url());
/// # Ok(()) }
/// ```
pub async fn spawn(config: ServerConfig, store: Store) -> io::Result<RunningServer> {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
    spawn_on(listener, config, store)
}

/// [`spawn`] on a listener of the caller's choosing.
pub fn spawn_on(
    listener: TcpListener,
    config: ServerConfig,
    store: Store,
) -> io::Result<RunningServer> {
    let addr = listener.local_addr()?;
    let state = AppState::new(config, store);
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(serve(listener, state.clone(), async move {
        let _ = stopped.await;
    }));
    Ok(RunningServer {
        addr,
        state,
        stop: Some(stop),
        task,
    })
}

impl RunningServer {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
    /// The replica's state (its `/stats` counters, limiter and store).
    pub fn state(&self) -> &AppState {
        &self.state
    }
    /// Stop accepting, finish in-flight requests, and wait for the task.
    pub async fn shutdown(mut self) -> io::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match (&mut self.task).await {
            Ok(result) => result,
            Err(e) => Err(io::Error::other(e)),
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}
