package postgres

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// EntryScan sends the range's error entries and its entries with a seq in
// one batch (one round trip), buffers the error entries (there are few)
// and hands each entry with a seq over from the driver's own bytes, the
// error entries merged in where they belong (store.MergeErrors' order).
func (q *queries) EntryScan(ctx context.Context, p *store.EntryListParams, each func(*store.EntryRow) error) error {
	b := &pgx.Batch{}
	b.Queue(dbsqlc.EntryErrorListSQL, p.ConversationID, p.AfterSeq, p.UpToSeq, int32(p.Limit))
	b.Queue(dbsqlc.EntryScanSQL, p.ConversationID, p.AfterSeq, p.UpToSeq, int32(p.Limit))
	br := q.db.DB().SendBatch(ctx, b)
	err := scanBatch(br, p, each)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return wrap(mapErr(err), "scanning entries of %s after seq %d", p.ConversationID, p.AfterSeq)
	}
	return nil
}

func scanBatch(br pgx.BatchResults, p *store.EntryListParams, each func(*store.EntryRow) error) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	errRows, err := pgx.CollectRows(rows, pgx.RowToStructByPos[dbsqlc.Entry])
	if err != nil {
		return fmt.Errorf("reading error entries: %w", err)
	}
	errs := make([]store.EntryRow, len(errRows))
	for i, e := range errRows {
		errs[i] = store.EntryRow{ID: e.ID, AfterSeq: e.AfterSeq, Kind: []byte(e.Kind), Author: []byte(e.Author),
			Content: e.Content, CreatedAt: e.CreatedAt}
	}
	merge := store.NewScanMerge(p, errs, each)
	if rows, err = br.Query(); err != nil {
		return err
	}
	defer rows.Close()
	var row store.EntryRow
	fields := rows.FieldDescriptions()
	for rows.Next() && !merge.Full() {
		raw := rows.RawValues()
		if len(raw) != 6 || len(fields) != 6 {
			return fmt.Errorf("EntryScan read %d columns, want 6", len(raw))
		}
		if err := decodeEntryRow(rows.Conn().TypeMap(), fields, raw, &row); err != nil {
			return err
		}
		if err := merge.Row(&row); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return merge.Done()
}

// decodeEntryRow fills row from EntryScan's columns (seq, id, kind, author,
// created_at, content): the binary forms of int8, uuid and timestamptz are
// read in place; anything else (the simple protocol's text) through the
// connection's type map.
func decodeEntryRow(m *pgtype.Map, fields []pgconn.FieldDescription, raw [][]byte, row *store.EntryRow) error {
	if f := fields[0]; f.Format == pgx.BinaryFormatCode && len(raw[0]) == 8 {
		row.Seq = int64(binary.BigEndian.Uint64(raw[0]))
	} else if err := m.Scan(f.DataTypeOID, f.Format, raw[0], &row.Seq); err != nil {
		return fmt.Errorf("reading seq: %w", err)
	}
	if f := fields[1]; f.Format == pgx.BinaryFormatCode && len(raw[1]) == 16 {
		copy(row.ID[:], raw[1])
	} else if err := m.Scan(f.DataTypeOID, f.Format, raw[1], &row.ID); err != nil {
		return fmt.Errorf("reading id: %w", err)
	}
	row.Kind, row.Author = raw[2], raw[3]
	if f := fields[4]; f.Format == pgx.BinaryFormatCode && len(raw[4]) == 8 {
		us := int64(binary.BigEndian.Uint64(raw[4]))
		row.CreatedAt = pgEpoch.Add(time.Duration(us) * time.Microsecond)
	} else if err := m.Scan(f.DataTypeOID, f.Format, raw[4], &row.CreatedAt); err != nil {
		return fmt.Errorf("reading created_at: %w", err)
	}
	row.CreatedAt = row.CreatedAt.UTC()
	row.Content = raw[5]
	return nil
}

// pgEpoch is where Postgres's binary timestamps count from.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
