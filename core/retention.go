package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	history "github.com/switchboardhq/switchboard/core/transcript"
	"github.com/switchboardhq/switchboard/store"
)

// Retention: each sweep deletes, per workspace with a retention, the
// conversations (trees: a root with its forks) whose last activity is
// older than the workspace keeps them, in batches, exporting each first
// when the workspace names an export directory. A tree whose export fails
// is kept and tried again by the next sweep; one that became active or
// busy since it was listed is kept by the store (ErrConflict).

// RetentionResult counts what the retention part of one sweep did.
type RetentionResult struct {
	Conversations int `json:"conversations"` // deleted, forks included
	Entries       int `json:"entries"`
	Artifacts     int `json:"artifacts"`
	Usage         int `json:"usage"`
	Exported      int `json:"exported"` // conversations written to an export directory before they went
	// ExportFailed are trees kept because their export failed.
	ExportFailed int `json:"export_failed"`
}

func (r *RetentionResult) add(o *RetentionResult) {
	r.Conversations += o.Conversations
	r.Entries += o.Entries
	r.Artifacts += o.Artifacts
	r.Usage += o.Usage
	r.Exported += o.Exported
	r.ExportFailed += o.ExportFailed
}

func (r *RetentionResult) purged(p *store.ConversationPurgeResult) {
	r.Conversations += p.Conversations
	r.Entries += p.Entries
	r.Artifacts += p.Artifacts
	r.Usage += p.Usage
}

// retentionBatch is how many trees one listing hands the sweep; the sweep
// takes batch after batch until a short one or retentionBudget.
const retentionBatch = store.DefaultListLimit

// retentionBudget bounds the retention part of one sweep; the next sweep
// takes the rest.
const retentionBudget = store.SweepBudget

// retain runs every workspace's retention as of now.
func (s *Service) retain(ctx context.Context, now time.Time) (RetentionResult, error) {
	var total RetentionResult
	rs, err := s.st.WorkspaceRetentionList(ctx)
	if err != nil {
		return total, fmt.Errorf("listing the workspaces' retention: %w", err)
	}
	// The budget runs on the process's clock, not the sweep's now: a
	// test's frozen clock must not make it endless.
	deadline := time.Now().Add(retentionBudget)
	var errs []error
	for _, r := range rs {
		if r.KeepDays <= 0 {
			continue
		}
		run, err := s.retainWorkspace(ctx, r, now, deadline)
		total.add(run)
		if err != nil {
			errs = append(errs, fmt.Errorf("the retention of workspace %s: %w", r.WorkspaceID, err))
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			break
		}
	}
	return total, errors.Join(errs...)
}

// retainWorkspace deletes one workspace's expired trees and records the
// run in the audit when it deleted or kept anything.
func (s *Service) retainWorkspace(ctx context.Context, r *store.WorkspaceRetention, now, deadline time.Time) (*RetentionResult, error) {
	run := &RetentionResult{}
	before := now.Add(-time.Duration(r.KeepDays) * 24 * time.Hour)
	var (
		after *store.RetentionCursor
		errs  []error
	)
	for {
		trees, err := s.st.ConversationExpiredList(ctx, &store.ConversationExpiredListParams{
			WorkspaceID: r.WorkspaceID, Before: before, Now: now, After: after, Limit: retentionBatch,
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("listing expired conversations: %w", err))
			break
		}
		for _, tr := range trees {
			after = tr.Cursor()
			if r.ExportDir != "" {
				if err := s.exportTree(ctx, r.ExportDir, tr); err != nil {
					// Kept: the next sweep lists it again and tries again.
					s.log.ErrorContext(ctx, "retention: exporting a conversation failed; it is kept until an export succeeds",
						"workspace", r.WorkspaceID, "conversation", tr.RootID, "export_dir", r.ExportDir, "error", err)
					run.ExportFailed++
					continue
				}
				run.Exported += len(tr.IDs)
			}
			res, err := s.st.ConversationPurge(ctx, &store.ConversationPurgeParams{
				RootID: tr.RootID, WorkspaceID: r.WorkspaceID, Before: before, Now: now,
			})
			switch {
			case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrNotFound):
				// Active or busy since the listing, or purged meanwhile.
				continue
			case err != nil:
				errs = append(errs, fmt.Errorf("deleting conversation %s: %w", tr.RootID, err))
				continue
			}
			run.purged(res)
		}
		if len(trees) < retentionBatch || ctx.Err() != nil || time.Now().After(deadline) {
			break
		}
	}
	if run.Conversations > 0 || run.ExportFailed > 0 || len(errs) > 0 {
		s.log.InfoContext(ctx, "retention: deleted conversations past the workspace's retention",
			"workspace", r.WorkspaceID, "keep_days", r.KeepDays, "conversations", run.Conversations, "entries", run.Entries,
			"exported", run.Exported, "export_failed", run.ExportFailed)
		if err := s.auditRetention(ctx, r, run, len(errs) > 0, now); err != nil {
			errs = append(errs, err)
		}
	}
	return run, errors.Join(errs...)
}

// auditRetention records one workspace's run: its counts, nothing of the
// conversations.
func (s *Service) auditRetention(ctx context.Context, r *store.WorkspaceRetention, run *RetentionResult, failed bool, now time.Time) error {
	detail, err := json.Marshal(struct {
		KeepDays  int    `json:"keep_days"`
		ExportDir string `json:"export_dir,omitempty"`
		*RetentionResult
	}{r.KeepDays, r.ExportDir, run})
	if err != nil {
		return err
	}
	outcome := store.AuditOK
	if failed || run.ExportFailed > 0 {
		outcome = store.AuditFailed
	}
	ws := r.WorkspaceID
	if _, err := s.st.AuditLog(ctx, &store.AuditLogParams{
		Action: store.AuditRetention, Actor: string(store.SystemAuthor), Outcome: outcome, WorkspaceID: &ws, Detail: detail, Now: now,
	}); err != nil {
		return fmt.Errorf("recording the retention run in the audit: %w", err)
	}
	return nil
}

// exportTree writes each conversation of the tree to dir as
// conversation-ID.json (the history export's JSON document), each through
// a temporary file renamed into place once it is on disk, so a crash never
// leaves a partial export under the final name.
func (s *Service) exportTree(ctx context.Context, dir string, tr *store.ExpiredTree) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the export directory: %w", err)
	}
	for _, id := range tr.IDs {
		doc, err := history.Export(ctx, s.st, id)
		if err != nil {
			return err
		}
		b, err := json.Marshal(doc)
		if err != nil {
			return fmt.Errorf("encoding conversation %s: %w", id, err)
		}
		if err := writeFileSynced(filepath.Join(dir, "conversation-"+id.String()+".json"), append(b, '\n')); err != nil {
			return err
		}
	}
	return nil
}

func writeFileSynced(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".export-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
