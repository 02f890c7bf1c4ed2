package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/store/dial"
)

// backupCommand is `switchboard backup PATH` and `switchboard restore PATH`
// (see app.Backup and app.Restore for what each does per store).
func backupCommand(ctx context.Context, cmd string, args []string, cfg app.Config, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.DatabaseURL, "database-url", cfg.DatabaseURL, "store: postgres://..., sqlite:PATH, or empty for "+dial.DefaultSQLitePath+" (DATABASE_URL)")
	force := fs.Bool("force", false, map[string]string{
		"backup":  "replace PATH when it exists",
		"restore": "replace a SQLite file that holds data (never one a running process holds)",
	}[cmd])
	var pgDump, pgRestore *string
	if cmd == "backup" {
		pgDump = fs.String("pg-dump", cfg.PgDumpPath, "the pg_dump program, for a Postgres store (SWITCHBOARD_PG_DUMP_PATH)")
	} else {
		pgRestore = fs.String("pg-restore", cfg.PgRestorePath, "the pg_restore program, for a Postgres store (SWITCHBOARD_PG_RESTORE_PATH)")
	}
	logLevel := fs.String("log-level", cfg.LogLevel, "debug, info, warn or error (SWITCHBOARD_LOG_LEVEL)")
	logFormat := fs.String("log-format", cfg.LogFormat, "text or json (SWITCHBOARD_LOG_FORMAT)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: switchboard %s [flags] PATH\n", cmd)
		fs.PrintDefaults()
	}
	path, err := parseWithOneArg(fs, args)
	if err != nil {
		return err
	}
	if path == "" {
		fs.Usage()
		return fmt.Errorf("%s: say which file: switchboard %s PATH", cmd, cmd)
	}
	level, err := parseLevel(*logLevel)
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, *logFormat, level)
	if err != nil {
		return err
	}
	if cmd == "backup" {
		res, err := app.Backup(ctx, app.BackupOptions{
			DatabaseURL: cfg.DatabaseURL, ListenURL: cfg.DatabaseListenURL, Path: path, Force: *force, PgDump: *pgDump, Logger: log,
		})
		if err != nil {
			return err
		}
		what := res.Dialect
		switch {
		case res.Dialect != "postgres":
		case res.WholeDatabase:
			what = "postgres (pg_dump custom format, the whole database; the store in schema " + res.Schema + ")"
		default:
			what = "postgres (pg_dump custom format, schema " + res.Schema + ")"
		}
		fmt.Fprintf(stdout, "wrote %s: %d bytes, %s, schema version %d, %d conversations\n", res.Path, res.Bytes, what, res.SchemaVersion, res.Conversations)
		return nil
	}
	res, err := app.Restore(ctx, app.RestoreOptions{
		DatabaseURL: cfg.DatabaseURL, ListenURL: cfg.DatabaseListenURL, Path: path, Force: *force, PgRestore: *pgRestore, Logger: log,
	})
	if err != nil {
		return err
	}
	migrated := ""
	if res.SchemaVersion != res.BackupVersion {
		migrated = fmt.Sprintf(" (the backup's %d, migrated)", res.BackupVersion)
	}
	fmt.Fprintf(stdout, "restored %s into %s: schema version %d%s, %d conversations\n", path, res.Where, res.SchemaVersion, migrated, res.Conversations)
	return nil
}

// parseWithOneArg parses flags before and after one positional argument
// (switchboard backup -force PATH, or backup PATH -force) and returns it;
// "" when none was given.
func parseWithOneArg(fs *flag.FlagSet, args []string) (string, error) {
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if fs.NArg() == 0 {
		return "", nil
	}
	arg := fs.Arg(0)
	if err := fs.Parse(fs.Args()[1:]); err != nil {
		return "", err
	}
	if fs.NArg() > 0 {
		return "", errors.New(fs.Name() + ": one PATH only; unexpected " + fmt.Sprintf("%q", fs.Args()))
	}
	return arg, nil
}
