package bots

import "io"

// ReadAtMost reads r to its end when it holds at most max bytes; over
// reports a longer one, read no further than max+1 bytes, so a platform's
// download never holds more than its file limit and one byte.
func ReadAtMost(r io.Reader, max int64) (data []byte, over bool, err error) {
	data, err = io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(data)) > max {
		return nil, true, nil
	}
	return data, false, nil
}
