package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/url"

	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

// queryFlags are a command's flags read as the query parameters of the API
// endpoint it mirrors (switchboard audit, GET /api/audit; switchboard
// usage, GET /api/usage), so that the command and the endpoint parse them
// with the same code and say the same things about bad values.
type queryFlags struct {
	values url.Values
	json   bool
}

// queryParam is one parameter offered as a flag.
type queryParam struct{ name, usage string }

func newQueryFlags(fs *flag.FlagSet, params []queryParam, jsonUsage string) *queryFlags {
	f := &queryFlags{values: url.Values{}}
	for _, p := range params {
		fs.Func(p.name, p.usage, func(s string) error { f.values.Set(p.name, s); return nil })
	}
	fs.BoolVar(&f.json, "json", false, jsonUsage)
	return f
}

// printJSON prints v indented, as the endpoint answers.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// dialStore opens the store that the commands which read or change the
// database directly work on: DATABASE_URL (or -database-url). It refuses
// a schema too new for this binary, as serve does, before the command
// reads or writes anything; the commands that migrate are refused by
// Migrate too.
func dialStore(ctx context.Context, cfg app.Config) (store.Store, error) {
	st, err := dial.Open(ctx, dial.Options{DatabaseURL: cfg.DatabaseURL, Logger: cfg.Logger, BinaryVersion: cfg.BinaryVersion})
	if err != nil {
		return nil, err
	}
	s, err := st.SchemaState(ctx)
	if err == nil {
		err = s.Err()
	}
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	return st, nil
}
