package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/switchboardhq/switchboard/internal/app"
)

// rotateKey seals every stored secret again under the current key of
// SWITCHBOARD_SECRET_KEY ("newid:BASE64,oldid:BASE64": the first seals,
// all open) and prints how many it resealed. A secret no listed key opens
// is reported and left as it is; the command then fails, so a script
// notices before the old key is dropped.
func rotateKey(ctx context.Context, cfg app.Config, stdout io.Writer) error {
	st, err := dialStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		return err
	}
	res, err := app.RotateKey(ctx, st, cfg.Keys, time.Now)
	if res != nil {
		fmt.Fprintf(stdout, "resealed %d secrets under key %q (%d already were)\n", res.Resealed, cfg.Keys.CurrentID(), res.Current)
		for _, u := range res.Unopened {
			fmt.Fprintf(stdout, "not opened, left as it is: %s\n", u)
		}
	}
	if err != nil {
		return fmt.Errorf("rotating the secret key: %w", err)
	}
	if len(res.Unopened) > 0 {
		return fmt.Errorf("%d secrets open under no key listed in SWITCHBOARD_SECRET_KEY; keep the key they were sealed with listed", len(res.Unopened))
	}
	return nil
}
