package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// EntryScan reads the range's error entries first (there are few), then
// hands each entry with a seq over from the driver's bytes (sql.RawBytes:
// no string or Entry built per row), the error entries merged in where
// they belong (store.MergeErrors' order).
func (q *queries) EntryScan(ctx context.Context, p *store.EntryListParams, each func(*store.EntryRow) error) error {
	if err := q.entryScan(ctx, p, each); err != nil {
		return wrap(err, "scanning entries of %s after seq %d", p.ConversationID, p.AfterSeq)
	}
	return nil
}

func (q *queries) entryScan(ctx context.Context, p *store.EntryListParams, each func(*store.EntryRow) error) error {
	args := entryListArgs(p)
	errRows, err := q.read().EntryErrorList(ctx, dbsqlc.EntryErrorListParams(args))
	if err != nil {
		return fmt.Errorf("reading error entries: %w", err)
	}
	errs := make([]store.EntryRow, len(errRows))
	for i, e := range errRows {
		errs[i] = store.EntryRow{ID: e.ID, AfterSeq: e.AfterSeq, Kind: []byte(e.Kind), Author: []byte(e.Author),
			Content: []byte(e.Content), CreatedAt: fromMicros(e.CreatedAt)}
	}
	merge := store.NewScanMerge(p, errs, each)
	rows, err := q.read().EntryScanRows(ctx, dbsqlc.EntryScanParams(args))
	if err != nil {
		return err
	}
	defer rows.Close()
	var (
		row                       store.EntryRow
		id, kind, author, content sql.RawBytes
		micros                    int64
	)
	for rows.Next() && !merge.Full() {
		if err := rows.Scan(&row.Seq, &id, &kind, &author, &micros, &content); err != nil {
			return err
		}
		if err := row.ID.UnmarshalText(id); err != nil {
			return fmt.Errorf("reading the id of seq %d: %w", row.Seq, err)
		}
		row.Kind, row.Author, row.Content, row.CreatedAt = kind, author, content, fromMicros(micros)
		if err := merge.Row(&row); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return merge.Done()
}
