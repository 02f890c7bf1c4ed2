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
