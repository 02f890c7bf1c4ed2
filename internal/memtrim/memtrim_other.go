//go:build !linux

package memtrim

import "errors"

func dropExecutablePages() (int64, error) {
	return 0, errors.New("only on Linux")
}
