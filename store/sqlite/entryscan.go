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
	errs := errRows
	handed := 0
	full := func() bool { return p.Limit > 0 && handed >= p.Limit }
	emitErrors := func(before int64) error {
		for len(errs) > 0 && errs[0].AfterSeq < before {
			e := errs[0]
			errs = errs[1:]
			if full() {
				return nil
			}
			handed++
			row := store.EntryRow{ID: e.ID, AfterSeq: e.AfterSeq, Kind: []byte(e.Kind), Author: []byte(e.Author),
				Content: []byte(e.Content), CreatedAt: fromMicros(e.CreatedAt)}
			if err := each(&row); err != nil {
				return err
			}
		}
		return nil
	}
	rows, err := q.read().EntryScanRows(ctx, dbsqlc.EntryScanParams(args))
	if err != nil {
		return err
	}
	defer rows.Close()
	var (
		row                       store.EntryRow
		id, kind, author, content sql.RawBytes
		micros                    int64
		lastSeq                   = p.AfterSeq
	)
	for rows.Next() {
		if err := rows.Scan(&row.Seq, &id, &kind, &author, &micros, &content); err != nil {
			return err
		}
		if err := row.ID.UnmarshalText(id); err != nil {
			return fmt.Errorf("reading the id of seq %d: %w", row.Seq, err)
		}
		row.Kind, row.Author, row.Content, row.CreatedAt = kind, author, content, fromMicros(micros)
		if err := emitErrors(row.Seq); err != nil {
			return err
		}
		if full() {
			return nil
		}
		handed++
		lastSeq = row.Seq
		if err := each(&row); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	upTo := lastSeq
	if p.UpToSeq > 0 {
		upTo = min(upTo, p.UpToSeq)
	}
	return emitErrors(upTo + 1)
}
