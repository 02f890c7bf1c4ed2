package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	matrixbot "github.com/switchboardhq/switchboard/bots/matrix"
	"github.com/switchboardhq/switchboard/core/access"
	"github.com/switchboardhq/switchboard/store"
)

// MatrixSettings are the Matrix bot account's (MATRIX_HOMESERVER_URL,
// MATRIX_USER_ID, MATRIX_ACCESS_TOKEN): all three turn Matrix on.
type MatrixSettings struct {
	MatrixHomeserverURL string
	MatrixUserID        string
	MatrixAccessToken   string
}

func matrixFromEnv(getenv func(string) string) MatrixSettings {
	return MatrixSettings{
		MatrixHomeserverURL: getenv("MATRIX_HOMESERVER_URL"),
		MatrixUserID:        getenv("MATRIX_USER_ID"),
		MatrixAccessToken:   getenv("MATRIX_ACCESS_TOKEN"),
	}
}

// matrixOn reports whether any Matrix setting is set.
func (m *MatrixSettings) matrixOn() bool {
	return m.MatrixHomeserverURL != "" || m.MatrixUserID != "" || m.MatrixAccessToken != ""
}

// checkMatrixSettings names the Matrix setting that is missing or wrong.
func (m *MatrixSettings) checkMatrixSettings() error {
	var errs []error
	for _, s := range []struct{ name, v string }{
		{"MATRIX_HOMESERVER_URL", m.MatrixHomeserverURL}, {"MATRIX_USER_ID", m.MatrixUserID}, {"MATRIX_ACCESS_TOKEN", m.MatrixAccessToken},
	} {
		if s.v == "" {
			errs = append(errs, fmt.Errorf("matrix: %s is not set, and Matrix needs MATRIX_HOMESERVER_URL, MATRIX_USER_ID and MATRIX_ACCESS_TOKEN together", s.name))
		}
	}
	if m.MatrixHomeserverURL != "" {
		if err := matrixbot.CheckHomeserverURL(m.MatrixHomeserverURL); err != nil {
			errs = append(errs, fmt.Errorf("MATRIX_HOMESERVER_URL: %w", err))
		}
	}
	if m.MatrixUserID != "" {
		if err := matrixbot.CheckUserID(m.MatrixUserID); err != nil {
			errs = append(errs, fmt.Errorf("MATRIX_USER_ID: %w", err))
		}
	}
	return errors.Join(errs...)
}

// buildMatrix creates the Matrix adapter when its settings are set.
func (a *App) buildMatrix() error {
	m := &a.cfg.MatrixSettings
	if !m.matrixOn() {
		return nil
	}
	if err := m.checkMatrixSettings(); err != nil {
		return err
	}
	mx, err := matrixbot.New(matrixbot.Options{
		HomeserverURL: m.MatrixHomeserverURL,
		UserID:        m.MatrixUserID,
		AccessToken:   m.MatrixAccessToken,
		Submitter:     a.Service,
		Sync:          &matrixSync{st: a.Store, name: "matrix:" + m.MatrixUserID, owner: a.cfg.InstanceID, now: a.cfg.Now},
		JoinFunc: func(ctx context.Context, inv matrixbot.Invite) (bool, error) {
			return a.Access.MayJoin(ctx, &access.Invite{Platform: matrixbot.Platform, Channel: inv.Room, Inviter: inv.Inviter, Direct: inv.Direct})
		},
		Logger: a.log.With("platform", matrixbot.Platform),
		Now:    a.cfg.Now,
		// The right to sync lasts as a turn's lease does: after a crash
		// another instance syncs within the same time it takes the turns.
		LeaseTTL: a.cfg.LeaseTTL,
	})
	if err != nil {
		return fmt.Errorf("matrix (MATRIX_ACCESS_TOKEN is set): %w", err)
	}
	a.Adapters = append(a.Adapters, mx)
	a.People.SetProfile(matrixbot.Platform, mx.Profile)
	return nil
}

// matrixSync is the Matrix adapter's SyncState over the store: the named
// lease "matrix:<user id>" elects the one instance that syncs, and the
// sync cursor of the same name keeps its next_batch token.
type matrixSync struct {
	st    store.Store
	name  string
	owner string
	now   func() time.Time
}

func (s *matrixSync) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

func (s *matrixSync) Lead(ctx context.Context, ttl time.Duration) (bool, error) {
	return s.st.LeaseAcquire(ctx, &store.NamedLeaseParams{Name: s.name, Owner: s.owner, TTL: ttl, Now: s.clock()})
}

func (s *matrixSync) Resign(ctx context.Context) error {
	return s.st.LeaseRelease(ctx, &store.NamedLeaseParams{Name: s.name, Owner: s.owner, Now: s.clock()})
}

func (s *matrixSync) Cursor(ctx context.Context) (string, error) {
	c, err := s.st.SyncCursorGet(ctx, s.name)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return c.Cursor, nil
}

func (s *matrixSync) SaveCursor(ctx context.Context, next string) error {
	return s.st.SyncCursorSave(ctx, &store.SyncCursorSaveParams{Name: s.name, Cursor: next, Now: s.clock()})
}
