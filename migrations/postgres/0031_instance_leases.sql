-- The lease of each instance id (SWITCHBOARD_INSTANCE_ID) by the process
-- that holds it: one live process per id. A process takes the row at start
-- (free, expired, or proven dead on the same host), heartbeats it while it
-- runs and deletes it on a graceful stop. holder is random per process, so
-- a restart under the same id is told apart from the process it replaces;
-- host, pid, process (the Linux boot id, pid namespace and start time of
-- the pid) and started_at name the holder in messages and let a process
-- on the same host prove a holder dead without waiting out the lease.
CREATE TABLE instance_leases (
    instance_id  text PRIMARY KEY,
    holder       text NOT NULL,
    host         text NOT NULL,
    pid          bigint NOT NULL,
    process      text NOT NULL DEFAULT '',
    started_at   timestamptz NOT NULL,
    heartbeat_at timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL
);
