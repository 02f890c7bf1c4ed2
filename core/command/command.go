package command

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/command/when"
	"github.com/switchboardhq/switchboard/core/connection"
	"github.com/switchboardhq/switchboard/scheduler"
	"github.com/switchboardhq/switchboard/store"
)

// Schedules is what the commands need of the scheduler;
// *scheduler.Scheduler implements it.
type Schedules interface {
	Remind(ctx context.Context, p scheduler.RemindParams) (*store.Schedule, error)
	CreateSchedule(ctx context.Context, p scheduler.ScheduleParams) (*store.Schedule, error)
	Find(ctx context.Context, agent string, kind store.ScheduleKind, name string) (*store.Schedule, error)
	List(ctx context.Context, agent string, kind store.ScheduleKind) ([]*store.Schedule, error)
	Update(ctx context.Context, sc *store.Schedule, c scheduler.Change) (*store.Schedule, error)
	Pause(ctx context.Context, sc *store.Schedule, reason string) (*store.Schedule, error)
	Resume(ctx context.Context, sc *store.Schedule) (*store.Schedule, error)
	StopLoop(ctx context.Context, sc *store.Schedule, reason string) (*store.Schedule, error)
	Delete(ctx context.Context, sc *store.Schedule) error
}

var _ Schedules = (*scheduler.Scheduler)(nil)

// Options configures a Handler.
type Options struct {
	// Schedules is the scheduler the commands act on. Required.
	Schedules Schedules
	// DefaultAgent is the agent a command addresses when the platform
	// names none. Required.
	DefaultAgent string
	// Now is the clock "in 2h" counts from. Default time.Now.
	Now func() time.Time
	// Grants lists and revokes standing grants (!grants); nil leaves the
	// command out.
	Grants Grants
	// Links, when set, answers `link`: linking a person's identities on
	// two platforms with a one-time code (*core.Directory implements it).
	Links Linker
	// Connections, when set, answers `connections` (GitHub and Google
	// accounts).
	Connections Connections
	// Rulebooks, when set, answers `rules`: the rulebook of the
	// conversation the command was typed in.
	Rulebooks Rulebooks
	// Participants, when set, answers `invite` and `remove`: agents joining
	// and leaving the conversation (*core.Service implements it).
	Participants Participants
	// Runs, when set, answers `runs` and `run`: the runs started in the
	// conversation, shown, cancelled and retried by id.
	Runs Runs
	// Logins, when set, answers `login` with a one-time link to the web
	// console.
	Logins Logins
}

// Logins issues one-time sign-in links to the web console for the person
// behind a platform user, and says how long a link lasts.
type Logins interface {
	LoginLink(ctx context.Context, platform, workspace, userID string) (link string, validFor time.Duration, err error)
}

// Participants adds agents to a conversation and takes them out.
type Participants interface {
	Invite(ctx context.Context, conv uuid.UUID, agent string) error
	Remove(ctx context.Context, conv uuid.UUID, agent string) error
}

// Linker issues and spends the one-time codes of `link`.
type Linker interface {
	LinkStart(ctx context.Context, platform, workspace, userID string) (string, error)
	LinkFinish(ctx context.Context, platform, workspace, userID, code string) (*store.Person, error)
}

func (o *Options) validate() error {
	switch {
	case o.Schedules == nil:
		return errors.New("command: Options.Schedules is required")
	case o.DefaultAgent == "":
		return errors.New("command: Options.DefaultAgent is required")
	}
	return nil
}

// Handler answers scheduling commands.
type Handler struct {
	opts Options
}

// New validates opts and returns a Handler.
func New(opts Options) (*Handler, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Handler{opts: opts}, nil
}

func (h *Handler) now() time.Time { return h.opts.Now().UTC() }

// Help lists the commands.
const Help = "Scheduling commands:\n" +
	"• `remind in 2h -- call Ana` · `remind tomorrow 9:00 -- standup notes` · `reminders` · `reminder cancel <name>`\n" +
	"• `routine add <name> every 4h -- <instruction>` · `routine add <name> cron 0 8 * * 1-5 tz America/New_York to here template briefing -- <instruction>`\n" +
	"• `routines` · `routine change <name> every 2h` · `routine change <name> -- <new instruction>` · `routine pause|resume|delete <name>`\n" +
	"• `pulses` · `pulse pause|resume|delete <name>`\n" +
	"• `loop start <name> [every 1h] [max 10] [budget 200000] [deadline 2026-03-09T17:00:00Z] -- <goal>` · `loops` · `loop stop|resume|delete <name>`\n" +
	"Times are in your time zone (from your Slack or Discord profile).\n" +
	"• `login` (in a DM) sends a one-time link that signs you in to the web console\n" +
	"• `link` (in a DM) gives a one-time code; `link CODE` in a DM on your other platform makes both accounts one person" +
	"\nAgents in this conversation: `invite <agent>` · `remove <agent>`" +
	"\nStanding grants:\n" + GrantsHelp +
	"\nThis conversation's rulebook:\n" + RulesHelp +
	"\nConnections:\n" + connection.CommandHelp +
	"\nRuns:\n" + RunsHelp

// request is a command and who gave it where.
type request struct {
	Platform  string
	Workspace string
	// Channel is where the command was given; "here" delivers there.
	Channel string
	UserID  string
	Agent   string
	Text    string
	// Fields are a command form's options (Discord's /remind when, what).
	Fields map[string]string
	// TimeZone is the person's time zone when the platform knows it.
	TimeZone string
	IsDM     bool
	// Private: only the person sees the reply (see core.Command.Private).
	Private bool
	// ConversationID is the conversation the command was typed in.
	ConversationID uuid.UUID
}

// Answer is the core.CommandFunc of every platform: it runs cmd for the
// person who sent in and returns the reply. A command that is malformed or
// refused (ErrRefused, or the scheduler's ErrInvalid and ErrTooMany) is
// answered with "⚠️ " and the reason in its own words; the error is only
// for failures on the server's side.
func (h *Handler) Answer(ctx context.Context, in *core.Inbound, cmd *core.Command) (string, error) {
	reply, err := h.run(ctx, request{
		Platform: in.Platform, Workspace: in.Workspace, Channel: in.Channel, UserID: in.UserID, Agent: in.Agent,
		Text: cmd.Text, Fields: cmd.Fields, TimeZone: in.TimeZone, IsDM: in.IsDM, Private: cmd.Private, ConversationID: cmd.ConversationID,
	})
	if why, ok := refusalText(err); ok {
		return "⚠️ " + why, nil
	}
	if err != nil {
		return "", fmt.Errorf("running command %q: %w", strings.Join(strings.Fields(cmd.Text), " "), err)
	}
	return reply, nil
}

var _ core.CommandFunc = (*Handler)(nil).Answer

// ErrRefused marks a command the handler refuses: unknown, malformed or
// not allowed. The error's text is the reason, in words fit for the person
// who typed it, with no prefix.
var ErrRefused = errors.New("command refused")

// refusal is an ErrRefused with its reason.
type refusal struct {
	msg   string
	cause error
}

func (r *refusal) Error() string        { return r.msg }
func (r *refusal) Is(target error) bool { return target == ErrRefused }
func (r *refusal) Unwrap() error        { return r.cause }

func invalid(format string, args ...any) error {
	return &refusal{msg: fmt.Sprintf(format, args...)}
}

// refusalText is what a person is told of a refused command: the reason of
// a refusal; the scheduler's own message for a schedule it refuses, without
// its "invalid schedule" label. ok is false for a failure on the server's
// side.
func refusalText(err error) (string, bool) {
	var r *refusal
	switch {
	case err == nil:
		return "", false
	case errors.As(err, &r):
		return r.msg, true
	case errors.Is(err, scheduler.ErrInvalid):
		return strings.TrimPrefix(err.Error(), scheduler.ErrInvalid.Error()+": "), true
	case errors.Is(err, scheduler.ErrTooMany):
		return err.Error(), true
	}
	return "", false
}

// parseWhen reads a time a person typed; what it cannot read is refused.
func (h *Handler) parseWhen(text, tz string) (time.Time, error) {
	t, err := when.Parse(text, h.now(), tz)
	if err != nil {
		return time.Time{}, &refusal{msg: err.Error(), cause: err}
	}
	return t, nil
}

// run runs a command; a malformed or refused one returns an ErrRefused
// error (or the scheduler's ErrInvalid) whose text can be shown.
func (h *Handler) run(ctx context.Context, r request) (string, error) {
	if r.Platform == "" || r.UserID == "" {
		return "", invalid("a command needs the platform and the person typing it")
	}
	if r.Agent == "" {
		r.Agent = h.opts.DefaultAgent
	}
	// A rulebook is free text, line breaks and " -- " included.
	if verb, text := cutVerb(r.Text); strings.EqualFold(verb, "rules") {
		return h.rules(ctx, r, text)
	}
	head, rest := splitInstruction(r.Text)
	words := strings.Fields(head)
	if len(words) == 0 {
		return Help, nil
	}
	verb := strings.ToLower(words[0])
	args := words[1:]
	switch verb {
	case "help":
		return Help, nil
	case "grants":
		return h.grants(ctx, r, args)
	case "connections":
		return h.connections(ctx, r, args)
	case "remind":
		return h.remind(ctx, r)
	case "link":
		return h.link(ctx, r, args)
	case "login":
		return h.login(ctx, r)
	case "invite", "remove":
		return h.participant(ctx, r, verb, args)
	case "run", "runs":
		return h.runs(ctx, r, verb, args)
	case "reminders", "routines", "pulses", "loops":
		return h.list(ctx, r, kindOfWord(strings.TrimSuffix(verb, "s")))
	case "reminder", "routine", "pulse", "loop":
		kind := kindOfWord(verb)
		if len(args) == 0 {
			return "", invalid("%s what? %s", verb, Help)
		}
		sub := strings.ToLower(args[0])
		args = args[1:]
		switch {
		case sub == "list":
			return h.list(ctx, r, kind)
		case sub == "add" && kind == store.ScheduleRoutine:
			return h.routineAdd(ctx, r, args, rest)
		case sub == "start" && kind == store.ScheduleLoop:
			return h.loopStart(ctx, r, args, rest)
		case sub == "change" && kind == store.ScheduleRoutine:
			return h.routineChange(ctx, r, args, rest)
		case sub == "pause" || sub == "resume" || sub == "delete" || sub == "cancel" || sub == "stop":
			if len(args) != 1 {
				return "", invalid("%s %s needs one name", verb, sub)
			}
			return h.state(ctx, r, kind, sub, args[0])
		}
		return "", invalid("unknown command %q. %s", verb+" "+sub, Help)
	}
	return "", invalid("unknown command %q. %s", verb, Help)
}

// participant answers `invite <agent>` and `remove <agent>`.
func (h *Handler) participant(ctx context.Context, r request, verb string, args []string) (string, error) {
	switch {
	case h.opts.Participants == nil || r.ConversationID == uuid.Nil:
		return "", invalid("%s works in a conversation with the agents", verb)
	case len(args) != 1:
		return "", invalid("%s needs one agent name, as in `%s scout`", verb, verb)
	}
	name := strings.ToLower(strings.TrimPrefix(args[0], "@"))
	if verb == "invite" {
		if err := h.opts.Participants.Invite(ctx, r.ConversationID, name); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s joined this conversation. Name it (`%s, …` or `@%s`) to ask it something.", name, name, name), nil
	}
	if err := h.opts.Participants.Remove(ctx, r.ConversationID, name); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s left this conversation; `invite %s` brings it back.", name, name), nil
}

// cutVerb splits a command's first word from the rest, whose line breaks
// are kept.
func cutVerb(text string) (verb, rest string) {
	text = strings.TrimSpace(text)
	i := strings.IndexFunc(text, unicode.IsSpace)
	if i < 0 {
		return text, ""
	}
	return text[:i], strings.TrimSpace(text[i:])
}

func kindOfWord(w string) store.ScheduleKind {
	switch w {
	case "reminder":
		return store.ScheduleReminder
	case "pulse":
		return store.SchedulePulse
	case "loop":
		return store.ScheduleLoop
	}
	return store.ScheduleRoutine
}

// splitInstruction splits "head -- instruction".
func splitInstruction(text string) (string, string) {
	head, rest, ok := strings.Cut(text, " -- ")
	if !ok {
		if h, ok := strings.CutSuffix(strings.TrimSpace(text), " --"); ok {
			return h, ""
		}
		return text, ""
	}
	return head, strings.TrimSpace(rest)
}

func (h *Handler) remindAt(ctx context.Context, r request, at time.Time, what string) (string, error) {
	sc, err := h.opts.Schedules.Remind(ctx, scheduler.RemindParams{
		Agent: r.Agent, Owner: r.UserID, Platform: r.Platform, Workspace: r.Workspace,
		At: at, Text: what, TimeZone: r.TimeZone, Source: "command",
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("OK, I'll remind you %s by DM (%s). Cancel with `reminder cancel %s`.",
		when.Format(at, r.TimeZone), strings.TrimSpace(what), sc.Name), nil
}

// remind reads a form's when and what fields, or the typed
// "remind [me] <when> [to] <what>" or "remind <when> -- <what>".
func (h *Handler) remind(ctx context.Context, r request) (string, error) {
	if r.Fields != nil {
		at, err := h.parseWhen(r.Fields["when"], r.TimeZone)
		if err != nil {
			return "", err
		}
		return h.remindAt(ctx, r, at, r.Fields["what"])
	}
	text := strings.TrimSpace(r.Text)
	text = strings.TrimSpace(text[len("remind"):])
	text = strings.TrimPrefix(text, "me ")
	if head, what := splitInstruction(text); what != "" {
		at, err := h.parseWhen(head, r.TimeZone)
		if err != nil {
			return "", err
		}
		return h.remindAt(ctx, r, at, what)
	}
	words := strings.Fields(text)
	// The longest prefix that reads as a time is the when; the rest is what.
	for n := min(len(words)-1, 4); n >= 1; n-- {
		at, err := h.parseWhen(strings.Join(words[:n], " "), r.TimeZone)
		if err != nil {
			continue
		}
		what := words[n:]
		if len(what) > 1 && strings.EqualFold(what[0], "to") {
			what = what[1:]
		}
		return h.remindAt(ctx, r, at, strings.Join(what, " "))
	}
	return "", invalid("say when and what, as in `remind in 2h -- call Ana` or `remind tomorrow 9:00 to send the report`")
}

func (h *Handler) list(ctx context.Context, r request, kind store.ScheduleKind) (string, error) {
	list, err := h.opts.Schedules.List(ctx, r.Agent, kind)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, sc := range list {
		if sc.Place.Platform != r.Platform || sc.Place.Workspace != r.Workspace {
			continue
		}
		if kind == store.ScheduleReminder && sc.Owner != r.UserID {
			continue // reminders are private
		}
		lines = append(lines, "• "+scheduler.Describe(sc))
	}
	if len(lines) == 0 {
		return fmt.Sprintf("%s has no %ss here.", r.Agent, kind), nil
	}
	return fmt.Sprintf("%ss of %s:\n%s", strings.ToUpper(string(kind[:1]))+string(kind[1:]), r.Agent, strings.Join(lines, "\n")), nil
}

// options reads "key value" pairs after a name: every, cron (to the next
// key), tz, to, template, max, budget, deadline.
func options(args []string) (map[string]string, error) {
	keys := map[string]bool{"every": true, "cron": true, "tz": true, "to": true, "template": true,
		"max": true, "budget": true, "deadline": true, "missed": true}
	out := map[string]string{}
	for i := 0; i < len(args); {
		k := strings.ToLower(args[i])
		if !keys[k] {
			return nil, invalid("unexpected %q: options are every, cron, tz, to, template, max, budget, deadline, missed", args[i])
		}
		j := i + 1
		if k == "cron" && j < len(args) {
			// A cron line's five fields may look like anything; a
			// descriptor (@daily) is one field.
			n := 5
			if strings.HasPrefix(args[j], "@") {
				n = 1
			}
			j = min(j+n, len(args))
		}
		for j < len(args) && !keys[strings.ToLower(args[j])] && k != "cron" {
			j++
		}
		if j == i+1 {
			return nil, invalid("%s needs a value", k)
		}
		out[k] = strings.Join(args[i+1:j], " ")
		i = j
	}
	return out, nil
}

func specFromOptions(o map[string]string) (string, bool, error) {
	switch {
	case o["every"] != "" && o["cron"] != "":
		return "", false, invalid("give every or cron, not both")
	case o["every"] != "":
		return "every " + o["every"], true, nil
	case o["cron"] != "":
		return "cron " + o["cron"], true, nil
	}
	return "", false, nil
}

func (h *Handler) routineAdd(ctx context.Context, r request, args []string, instruction string) (string, error) {
	if len(args) == 0 {
		return "", invalid("routine add needs a name")
	}
	name := strings.ToLower(args[0])
	o, err := options(args[1:])
	if err != nil {
		return "", err
	}
	spec, ok, err := specFromOptions(o)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", invalid("routine add %s needs every (such as 4h) or cron (such as 0 8 * * 1-5)", name)
	}
	tz := o["tz"]
	if tz == "" {
		tz = r.TimeZone
	}
	sc, err := h.opts.Schedules.CreateSchedule(ctx, scheduler.ScheduleParams{
		Kind: store.ScheduleRoutine, Agent: r.Agent, Name: name, Owner: r.UserID,
		Target: scheduler.Target{Platform: r.Platform, Workspace: r.Workspace, Channel: scheduler.DeliverTo(r.Channel, o["to"])},
		Spec:   spec, TimeZone: tz, Instruction: instruction, Template: o["template"],
		Missed: store.MissedPolicy(o["missed"]), Source: "command",
	})
	if err != nil {
		return "", err
	}
	return "Routine created: " + scheduler.Describe(sc), nil
}

func (h *Handler) routineChange(ctx context.Context, r request, args []string, instruction string) (string, error) {
	if len(args) == 0 {
		return "", invalid("routine change needs a name")
	}
	sc, err := h.mine(ctx, r, store.ScheduleRoutine, args[0])
	if err != nil {
		return "", err
	}
	o, err := options(args[1:])
	if err != nil {
		return "", err
	}
	var c scheduler.Change
	if spec, ok, err := specFromOptions(o); err != nil {
		return "", err
	} else if ok {
		c.Spec = &spec
	}
	if tz, ok := o["tz"]; ok {
		c.TimeZone = &tz
	}
	if to, ok := o["to"]; ok {
		ch := scheduler.DeliverTo(r.Channel, to)
		c.Channel = &ch
	}
	if instruction != "" {
		c.Instruction = &instruction
	}
	if c == (scheduler.Change{}) {
		return "", invalid("routine change %s: change what? Give every, cron, tz, to, or -- a new instruction", sc.Name)
	}
	sc, err = h.opts.Schedules.Update(ctx, sc, c)
	if err != nil {
		return "", err
	}
	return "Routine changed: " + scheduler.Describe(sc), nil
}

func (h *Handler) loopStart(ctx context.Context, r request, args []string, goal string) (string, error) {
	if len(args) == 0 {
		return "", invalid("loop start needs a name")
	}
	o, err := options(args[1:])
	if err != nil {
		return "", err
	}
	spec := "continuous"
	if o["every"] != "" {
		spec = "every " + o["every"]
	}
	var lc scheduler.LoopConfig
	if v := o["max"]; v != "" {
		if lc.MaxIterations, err = strconv.Atoi(v); err != nil {
			return "", invalid("max %q must be a number of iterations", v)
		}
	}
	if v := o["budget"]; v != "" {
		if lc.TokenBudget, err = strconv.ParseInt(v, 10, 64); err != nil {
			return "", invalid("budget %q must be a number of tokens", v)
		}
	}
	if v := o["deadline"]; v != "" {
		t, err := h.parseWhen(v, r.TimeZone)
		if err != nil {
			return "", err
		}
		lc.Deadline = &t
	}
	sc, err := h.opts.Schedules.CreateSchedule(ctx, scheduler.ScheduleParams{
		Kind: store.ScheduleLoop, Agent: r.Agent, Name: strings.ToLower(args[0]), Owner: r.UserID,
		Target: scheduler.Target{Platform: r.Platform, Workspace: r.Workspace, Channel: r.Channel},
		Spec:   spec, TimeZone: r.TimeZone, Instruction: goal, Loop: &lc, Source: "command",
	})
	if err != nil {
		return "", err
	}
	return "Goal loop started: " + scheduler.Describe(sc) + ". I'll DM you when it ends or needs you.", nil
}

// mine finds a schedule the person may change: in this workspace, and
// theirs (or nobody's).
func (h *Handler) mine(ctx context.Context, r request, kind store.ScheduleKind, name string) (*store.Schedule, error) {
	sc, err := h.opts.Schedules.Find(ctx, r.Agent, kind, strings.ToLower(name))
	if errors.Is(err, store.ErrNotFound) {
		return nil, invalid("%s has no %s named %q", r.Agent, kind, name)
	}
	if err != nil {
		return nil, err
	}
	if sc.Place.Platform != r.Platform || sc.Place.Workspace != r.Workspace {
		return nil, invalid("%s %q belongs to another workspace", kind, name)
	}
	if sc.Owner != "" && sc.Owner != r.UserID {
		return nil, invalid("%s %q is not yours to change", kind, name)
	}
	return sc, nil
}

func (h *Handler) state(ctx context.Context, r request, kind store.ScheduleKind, verb, name string) (string, error) {
	sc, err := h.mine(ctx, r, kind, name)
	if err != nil {
		return "", err
	}
	switch verb {
	case "pause", "stop":
		if kind == store.ScheduleLoop && verb == "stop" {
			if _, err := h.opts.Schedules.StopLoop(ctx, sc, "stopped by "+r.UserID); err != nil {
				return "", err
			}
			return fmt.Sprintf("Goal loop %s stopped.", sc.Name), nil
		}
		if _, err := h.opts.Schedules.Pause(ctx, sc, "paused by "+r.UserID); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %s paused.", kind, sc.Name), nil
	case "resume":
		sc, err = h.opts.Schedules.Resume(ctx, sc)
		if err != nil {
			return "", err
		}
		return "Resumed: " + scheduler.Describe(sc), nil
	}
	if err := h.opts.Schedules.Delete(ctx, sc); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s %s deleted.", kind, sc.Name), nil
}
