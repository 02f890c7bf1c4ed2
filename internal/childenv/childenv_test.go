package childenv

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFrom(t *testing.T) {
	env := map[string]string{"PATH": "/usr/bin", "HOME": "/home/sb", "DATABASE_URL": "postgres://secret", "LANG": ""}
	got := From(func(k string) string { return env[k] }, Base...)
	require.Equal(t, []string{"PATH=/usr/bin", "HOME=/home/sb"}, got, "only named, set variables; never DATABASE_URL")
}
