//! The SQL tab's worker: one thread per trace that opens the trace's views (over the export
//! file, or the loaded PyTorch trace copied into memory; for a run of ranks, the run's database
//! filled rank by rank) on its first query and runs every
//! query, so the window never waits for SQLite. A shared flag cancels the query running (SQLite's
//! progress handler checks it every few thousand steps); dropping the session cancels and lets
//! the thread end.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::time::{Duration, Instant};

use crate::sql::{QueryResult, SqlTrace};
use crate::trace::Trace;

/// One query to run.
pub struct SqlRequest {
    pub sql: String,
    /// Named parameters (`sel_start`, `sel_end`) and their values.
    pub params: Vec<(&'static str, i64)>,
    pub limit: usize,
    pub timeout: Duration,
}

/// How a query ended.
#[derive(Debug, Clone)]
pub struct SqlAnswer {
    pub sql: String,
    /// The rows, or SQLite's (or the guard's) message.
    pub result: Result<Arc<QueryResult>, String>,
    /// Wall time of the query (opening the views on the first one included).
    pub elapsed: Duration,
}

/// A trace's SQL thread and the query it is running.
pub struct SqlSession {
    requests: Option<Sender<SqlRequest>>,
    answers: Receiver<SqlAnswer>,
    cancel: Arc<AtomicBool>,
    running: Option<(String, Instant)>,
}

impl SqlSession {
    /// Starts the thread for `trace`; `repaint` is called when an answer is ready.
    pub fn start(trace: Arc<Trace>, repaint: impl Fn() + Send + 'static) -> Self {
        Self::start_with(
            move |_| SqlTrace::for_shared(trace.clone()).map_err(|e| e.to_string()),
            repaint,
        )
    }

    /// Starts the thread with the database `open` makes on it before the first query (a run's
    /// database is filled there; the cancel flag it is given stops the filling). A database
    /// that could not be made is tried again at the next query.
    pub fn start_with(
        open: impl Fn(&AtomicBool) -> Result<SqlTrace, String> + Send + 'static,
        repaint: impl Fn() + Send + 'static,
    ) -> Self {
        let (requests, inbox) = mpsc::channel::<SqlRequest>();
        let (outbox, answers) = mpsc::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = cancel.clone();
        let spawned = std::thread::Builder::new()
            .name("sightline-sql".into())
            .spawn(move || {
                let mut db: Option<Result<SqlTrace, String>> = None;
                while let Ok(req) = inbox.recv() {
                    let started = Instant::now();
                    if db.as_ref().is_some_and(Result::is_err) {
                        db = None;
                    }
                    let opened = db.get_or_insert_with(|| open(&flag));
                    let result = match opened {
                        Ok(db) => db
                            .query_with(
                                &req.sql,
                                &req.params,
                                Some(req.limit),
                                req.timeout,
                                Some(flag.clone()),
                            )
                            .map(Arc::new)
                            .map_err(|e| e.to_string()),
                        Err(e) => Err(e.clone()),
                    };
                    let answer = SqlAnswer {
                        sql: req.sql,
                        result,
                        elapsed: started.elapsed(),
                    };
                    if outbox.send(answer).is_err() {
                        break;
                    }
                    repaint();
                }
            });
        let requests = match spawned {
            Ok(_) => Some(requests),
            Err(e) => {
                eprintln!("sightline: cannot start the SQL thread: {e}");
                None
            }
        };
        Self {
            requests,
            answers,
            cancel,
            running: None,
        }
    }

    /// Sends `request` unless a query is running; false when it could not be sent.
    pub fn run(&mut self, request: SqlRequest) -> bool {
        if self.running.is_some() {
            return false;
        }
        let Some(requests) = &self.requests else {
            return false;
        };
        self.cancel.store(false, Ordering::Relaxed);
        let sql = request.sql.clone();
        if requests.send(request).is_err() {
            return false;
        }
        self.running = Some((sql, Instant::now()));
        true
    }

    /// Asks the running query to stop; its answer (“cancelled”) comes back as any other.
    pub fn cancel(&self) {
        if self.running.is_some() {
            self.cancel.store(true, Ordering::Relaxed);
        }
    }

    /// The query running and since when.
    pub fn running(&self) -> Option<&(String, Instant)> {
        self.running.as_ref()
    }

    /// The answer of the query that ended since the last poll, if any.
    pub fn poll(&mut self) -> Option<SqlAnswer> {
        match self.answers.try_recv() {
            Ok(answer) => {
                self.running = None;
                Some(answer)
            }
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => self.running.take().map(|(sql, since)| SqlAnswer {
                sql,
                result: Err("the SQL thread stopped (a bug in Sightline: see stderr)".into()),
                elapsed: since.elapsed(),
            }),
        }
    }
}

impl Drop for SqlSession {
    fn drop(&mut self) {
        // The thread ends once its query stops and it finds no one to send to.
        self.cancel.store(true, Ordering::Relaxed);
    }
}
