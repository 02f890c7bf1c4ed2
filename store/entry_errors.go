package store

// A display read (EntryListParams.WithErrors) is two reads in index order,
// the entries with a seq and then the error entries of the same range, merged
// here, so that a long catch-up is never one sort of the whole log. The
// drivers share these two steps.

// ErrorsUpTo is the last seq whose error entries a display read reads beside
// list, the entries with a seq that the first read returned for p: up to the
// last of them (or p.AfterSeq), so an error that followed an entry appended
// after the first read waits for the next read, behind its entry. ok is false
// when there is no range to read.
func ErrorsUpTo(p *EntryListParams, list []*Entry) (upTo int64, ok bool) {
	upTo = p.AfterSeq
	if len(list) > 0 {
		upTo = max(upTo, *list[len(list)-1].Seq)
	}
	if p.UpToSeq > 0 {
		upTo = min(upTo, p.UpToSeq)
	}
	return upTo, upTo >= p.AfterSeq
}

// MergeErrors puts each of errs (error entries in the order they were
// written) right after the entry it followed in list, and cuts the result to
// limit entries (0: no limit).
func MergeErrors(list, errs []*Entry, limit int) []*Entry {
	if len(errs) == 0 {
		return list
	}
	out := make([]*Entry, 0, len(list)+len(errs))
	for _, e := range list {
		for len(errs) > 0 && errs[0].AfterSeq < *e.Seq {
			out, errs = append(out, errs[0]), errs[1:]
		}
		out = append(out, e)
	}
	out = append(out, errs...)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// ScanMerge is MergeErrors for EntryScan, whose entries with a seq go by
// one at a time: the drivers read the range's error entries first (errs,
// in display order; there are few), then hand each entry with a seq to Row
// and end with Done. each gets them all in display order, cut at
// p.Limit, the error entries after the last seq read as ErrorsUpTo says.
type ScanMerge struct {
	p       *EntryListParams
	errs    []EntryRow
	each    func(*EntryRow) error
	handed  int
	lastSeq int64
}

// NewScanMerge starts the merge of a read of p.
func NewScanMerge(p *EntryListParams, errs []EntryRow, each func(*EntryRow) error) *ScanMerge {
	return &ScanMerge{p: p, errs: errs, each: each, lastSeq: p.AfterSeq}
}

// Full reports that the read has handed over p.Limit entries: the driver
// stops reading.
func (m *ScanMerge) Full() bool { return m.p.Limit > 0 && m.handed >= m.p.Limit }

// Row hands over the error entries that come before r, then r.
func (m *ScanMerge) Row(r *EntryRow) error {
	if err := m.errorsBefore(r.Seq); err != nil || m.Full() {
		return err
	}
	m.handed++
	m.lastSeq = r.Seq
	return m.each(r)
}

// Done hands over the error entries that follow the last entry read: one
// that followed an entry appended after the read waits for the next.
func (m *ScanMerge) Done() error {
	upTo := m.lastSeq
	if m.p.UpToSeq > 0 {
		upTo = min(upTo, m.p.UpToSeq)
	}
	return m.errorsBefore(upTo + 1)
}

func (m *ScanMerge) errorsBefore(seq int64) error {
	for len(m.errs) > 0 && m.errs[0].AfterSeq < seq && !m.Full() {
		e := &m.errs[0]
		m.errs = m.errs[1:]
		m.handed++
		if err := m.each(e); err != nil {
			return err
		}
	}
	return nil
}
