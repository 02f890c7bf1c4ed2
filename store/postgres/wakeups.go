package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// topicProbe is the channel CheckWakeups sends itself a notification on.
const topicProbe = "switchboard_probe"

// ErrWakeupsLost is CheckWakeups' answer when a notification sent through
// the pool never reached the LISTEN connection: the usual cause is a
// transaction pooler (PgBouncer in transaction mode, Supabase's pooler) in
// front of both. Workers then find new work only by polling.
var ErrWakeupsLost = errors.New("notifications sent through DATABASE_URL do not reach the LISTEN connection")

// CheckWakeups sends a notification through the pool and waits up to
// timeout for the listener to receive it. It answers nil when wake-ups
// work, ErrWakeupsLost when the notification never came, and another error
// when the check could not run. Run it after start, off the start path.
func (s *Store) CheckWakeups(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ch, err := s.d.Subscribe(ctx, topicProbe)
	if err != nil {
		return fmt.Errorf("checking wake-ups: %w", err)
	}
	b := make([]byte, 8)
	rand.Read(b)
	token := hex.EncodeToString(b)
	// Through a transaction pooler the LISTEN ran on whichever server
	// connection served it, which then went back to the pool: the
	// notification goes to no client, or to another one. Directly, it
	// arrives within a round trip. It is sent again a few times within the
	// timeout, so a listener still reconnecting is not taken for a pooler.
	send := time.NewTicker(timeout / 5)
	defer send.Stop()
	if err := s.d.Publish(ctx, topicProbe, token); err != nil {
		return fmt.Errorf("checking wake-ups: %w", err)
	}
	for {
		select {
		case n, ok := <-ch:
			if !ok {
				return fmt.Errorf("checking wake-ups: %w", ErrWakeupsLost)
			}
			if n.Payload == token {
				return nil
			}
		case <-send.C:
			if err := s.d.Publish(ctx, topicProbe, token); err != nil {
				return fmt.Errorf("checking wake-ups: %w", err)
			}
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return ErrWakeupsLost
			}
			return ctx.Err()
		}
	}
}
