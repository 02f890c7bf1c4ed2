package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

// TestPairingListAndApprove: the operator sees a stranger's code with
// `switchboard pairing list` and lets them in with `pairing approve`.
func TestPairingListAndApprove(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := "sqlite:" + testenv.SQLiteFile(t)
	st, err := dial.Open(ctx, dial.Options{DatabaseURL: db})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	req, err := st.PairingRequest(ctx, &store.PairingRequestParams{Platform: "slack", UserID: "U0MAL", UserName: "Mallory"})
	if err != nil {
		t.Fatal(err)
	}
	code := req.Pairing.Code
	pairing := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(ctx, append([]string{"pairing", "-log-level", "error"}, args...), env(map[string]string{"DATABASE_URL": db}), nil, &out, &errOut)
		return out.String(), err
	}

	out, err := pairing("list")
	if err != nil || !strings.Contains(out, code) || !strings.Contains(out, "U0MAL") {
		t.Fatalf("pairing list = %q, %v; want a row with %s for U0MAL", out, err, code)
	}
	if _, err := pairing("approve", "ZZZZ2345"); err == nil || !strings.Contains(err.Error(), "no pending pairing") {
		t.Errorf("approving an unknown code: %v, want an error that says so", err)
	}
	if out, err = pairing("approve", strings.ToLower(code)); err != nil || !strings.Contains(out, "approved Mallory") {
		t.Fatalf("pairing approve = %q, %v", out, err)
	}
	p, err := st.PairingFind(ctx, &store.PairingFindParams{Platform: "slack", UserID: "U0MAL"})
	if err != nil || !p.Approved() || p.ApprovedBy != "operator" {
		t.Fatalf("after the CLI approval the pairing is %+v, %v; want approved by operator", p, err)
	}
	if out, _ = pairing("list"); !strings.Contains(out, "no pairing codes are waiting") {
		t.Errorf("pairing list after approval = %q", out)
	}
	if _, err := pairing("approve"); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("pairing approve without a code: %v, want the usage", err)
	}
	_ = st.Close()
}
