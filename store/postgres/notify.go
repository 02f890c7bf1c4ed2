package postgres

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// note is one wake-up waiting to be sent.
type note struct {
	topic   string
	payload string
}

// notifier sends wake-ups after the commits that caused them, off the
// committing goroutine. A NOTIFY inside each hot insert transaction halves
// insert throughput (Postgres serialises commits that notify on a global
// lock); gathering them for a short window and sending them deduplicated in
// one round trip costs the writers nothing.
type notifier struct {
	pool    *pgxpool.Pool
	window  time.Duration
	logger  *slog.Logger
	channel func(topic string) string

	mu      sync.Mutex
	pending []note
	seen    map[note]struct{}

	wake    chan struct{} // capacity 1: "there is something pending"
	done    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

func newNotifier(pool *pgxpool.Pool, window time.Duration, logger *slog.Logger, channel func(string) string) *notifier {
	return &notifier{
		pool:    pool,
		window:  window,
		logger:  logger,
		channel: channel,
		seen:    map[note]struct{}{},
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
}

func (n *notifier) start() { go n.run() }

// add queues wake-ups; it never blocks on the database.
func (n *notifier) add(ns ...note) {
	if len(ns) == 0 {
		return
	}
	n.mu.Lock()
	for _, x := range ns {
		if _, dup := n.seen[x]; dup {
			continue
		}
		n.seen[x] = struct{}{}
		n.pending = append(n.pending, x)
	}
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *notifier) run() {
	defer close(n.stopped)
	timer := time.NewTimer(0)
	if !timer.Stop() {
		<-timer.C
	}
	for {
		select {
		case <-n.done:
			n.flush()
			return
		case <-n.wake:
		}
		// Let the window fill: one round trip for a burst of commits.
		timer.Reset(n.window)
		select {
		case <-timer.C:
		case <-n.done:
			timer.Stop()
		}
		n.flush()
	}
}

// flush sends everything pending in one batch. A failure loses these
// wake-ups, which is safe: listeners also poll.
func (n *notifier) flush() {
	n.mu.Lock()
	batch := n.pending
	n.pending = nil
	clear(n.seen)
	n.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	args := make([]*dbsqlc.NotifyParams, len(batch))
	for i, x := range batch {
		args[i] = &dbsqlc.NotifyParams{Channel: n.channel(x.topic), Payload: x.payload}
	}
	if err := dbsqlc.New(n.pool).Notify(ctx, args).Close(); err != nil {
		n.logger.WarnContext(ctx, "sending notifications failed; listeners will catch up by polling",
			"count", len(batch), "error", err)
	}
}

// stop sends what is pending and ends the goroutine.
func (n *notifier) stop() {
	n.once.Do(func() { close(n.done) })
	<-n.stopped
}

// ---- listening ----

const subscriptionBuffer = 64

// listener owns the Store's one LISTEN connection and fans notifications out
// to subscribers. It starts with the first Subscribe, reconnects with
// backoff, and LISTENs again on every channel after a reconnect.
type listener struct {
	cfg     *pgx.ConnConfig
	logger  *slog.Logger
	channel func(topic string) string

	ctx    context.Context // ends with stop
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	started   bool
	stopped   bool
	subs      map[string]map[*subscription]struct{} // by topic
	topicOf   map[string]string                     // channel -> topic
	listening map[string]bool                       // topics LISTENed on the current connection
	acks      map[string][]chan struct{}            // closed once the topic is LISTENed
	interrupt context.CancelFunc                    // ends the current wait, to LISTEN more
	pid       uint32                                // backend of the current connection, 0 when none
	down      bool                                  // the last connection attempt failed; retrying after a pause
}

type subscription struct {
	topic string
	ch    chan store.Notification
}

func newListener(cfg *pgx.ConnConfig, logger *slog.Logger, channel func(string) string) *listener {
	ctx, cancel := context.WithCancel(context.Background())
	return &listener{
		cfg:       cfg,
		logger:    logger,
		channel:   channel,
		ctx:       ctx,
		cancel:    cancel,
		subs:      map[string]map[*subscription]struct{}{},
		topicOf:   map[string]string{},
		listening: map[string]bool{},
		acks:      map[string][]chan struct{}{},
	}
}

func (l *listener) subscribe(ctx context.Context, topic string) (<-chan store.Notification, error) {
	sub := &subscription{topic: topic, ch: make(chan store.Notification, subscriptionBuffer)}
	ack := make(chan struct{})

	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return nil, errors.New("subscribing: store is closed")
	}
	if l.subs[topic] == nil {
		l.subs[topic] = map[*subscription]struct{}{}
	}
	l.subs[topic][sub] = struct{}{}
	l.topicOf[l.channel(topic)] = topic
	// Wait for the LISTEN unless the listener is known to be down: then the
	// caller should not hang on the database, and the LISTEN happens on
	// reconnect.
	waitForAck := !l.down
	if l.listening[topic] {
		close(ack)
	} else {
		l.acks[topic] = append(l.acks[topic], ack)
		if l.interrupt != nil {
			l.interrupt()
		}
	}
	if !l.started {
		l.started = true
		l.wg.Add(1)
		go l.run()
	}
	l.wg.Add(1)
	l.mu.Unlock()

	go func() {
		defer l.wg.Done()
		select {
		case <-ctx.Done():
		case <-l.ctx.Done():
		}
		l.mu.Lock()
		delete(l.subs[topic], sub)
		close(sub.ch)
		l.mu.Unlock()
	}()

	if waitForAck {
		select {
		case <-ack:
		case <-ctx.Done():
		case <-l.ctx.Done():
		}
	}
	return sub.ch, nil
}

// run keeps a connection up and reads from it until stop.
func (l *listener) run() {
	defer l.wg.Done()
	var backoff backoff
	first := true
	for {
		connected, err := l.session(first)
		if l.ctx.Err() != nil {
			return
		}
		if connected {
			// It worked for a while: retry quickly, then back off again.
			backoff.reset()
			first = false
		}
		delay := backoff.next()
		l.logger.WarnContext(l.ctx, "notification listener is disconnected; reconnecting",
			"error", err, "retry_in", delay)
		select {
		case <-time.After(delay):
		case <-l.ctx.Done():
			return
		}
	}
}

// session runs one connection until it fails or stop. connected reports
// whether it got as far as connecting. first is true until a connection has
// been made once: on any later connection every subscriber gets a wake-up,
// since notifications sent while the listener was away are lost.
func (l *listener) session(first bool) (connected bool, err error) {
	conn, err := pgx.ConnectConfig(l.ctx, l.cfg)
	if err != nil {
		l.setDown()
		return false, err
	}
	defer func() {
		l.mu.Lock()
		l.pid = 0
		clear(l.listening)
		l.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(ctx) // best effort: the connection is usually already broken
	}()
	l.mu.Lock()
	l.pid = conn.PgConn().PID()
	l.down = false
	l.mu.Unlock()

	resynced := first
	for {
		if err := l.listenPending(conn); err != nil {
			l.setDown()
			return true, err
		}
		if !resynced {
			l.broadcast()
			resynced = true
		}

		waitCtx, cancel := context.WithCancel(l.ctx)
		l.mu.Lock()
		l.interrupt = cancel
		more := l.wantsMore()
		l.mu.Unlock()
		if more {
			cancel()
		}
		n, err := conn.WaitForNotification(waitCtx)
		l.mu.Lock()
		l.interrupt = nil
		l.mu.Unlock()
		cancel()
		switch {
		case err == nil:
			l.dispatch(n.Channel, n.Payload)
		case l.ctx.Err() != nil:
			return true, nil
		case waitCtx.Err() != nil && !conn.IsClosed():
			// Interrupted to LISTEN a new topic; the connection is intact.
		default:
			l.setDown()
			return true, err
		}
	}
}

// listenPending LISTENs on every topic that has subscribers and is not yet
// listened to on this connection.
func (l *listener) listenPending(conn *pgx.Conn) error {
	for {
		l.mu.Lock()
		topic := ""
		for t, subs := range l.subs {
			if len(subs) > 0 && !l.listening[t] {
				topic = t
				break
			}
		}
		l.mu.Unlock()
		if topic == "" {
			return nil
		}
		stmt, err := dbsqlc.New(conn).ListenStatement(l.ctx, l.channel(topic))
		if err != nil {
			return err
		}
		if _, err := conn.Exec(l.ctx, stmt); err != nil {
			return err
		}
		l.mu.Lock()
		l.listening[topic] = true
		for _, a := range l.acks[topic] {
			close(a)
		}
		delete(l.acks, topic)
		l.mu.Unlock()
	}
}

// wantsMore reports whether a topic awaits LISTEN. Called with mu held.
func (l *listener) wantsMore() bool {
	for t, subs := range l.subs {
		if len(subs) > 0 && !l.listening[t] {
			return true
		}
	}
	return false
}

// setDown marks the listener disconnected and releases subscribers waiting
// for a LISTEN that cannot happen now; it will happen on reconnect.
func (l *listener) setDown() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.down = true
	for t, as := range l.acks {
		for _, a := range as {
			close(a)
		}
		delete(l.acks, t)
	}
}

func (l *listener) dispatch(channel, payload string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	topic, ok := l.topicOf[channel]
	if !ok {
		return
	}
	for sub := range l.subs[topic] {
		select {
		case sub.ch <- store.Notification{Topic: topic, Payload: payload}:
		default: // a slow subscriber loses this one; it polls too
		}
	}
}

// broadcast sends every subscriber an empty-payload wake-up.
func (l *listener) broadcast() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for topic, subs := range l.subs {
		for sub := range subs {
			select {
			case sub.ch <- store.Notification{Topic: topic}:
			default:
			}
		}
	}
}

// stop closes the connection and every subscription channel, and waits for
// all goroutines.
func (l *listener) stop() {
	l.mu.Lock()
	l.stopped = true
	l.mu.Unlock()
	l.cancel()
	l.wg.Wait()
}

// backendPID is the server process of the current LISTEN connection, 0 when
// disconnected (for tests that cut the connection).
func (l *listener) backendPID() uint32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pid
}

// backoff doubles from 100ms to about 13s.
type backoff struct{ cur time.Duration }

func (b *backoff) next() time.Duration {
	switch {
	case b.cur == 0:
		b.cur = 100 * time.Millisecond
	case b.cur < 10*time.Second:
		b.cur *= 2
	}
	return b.cur
}

func (b *backoff) reset() { b.cur = 0 }
