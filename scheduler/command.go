package scheduler

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

// CommandRequest is a person's scheduling command, typed on a platform
// (a slash command or a message such as "routine list").
type CommandRequest struct {
	Platform  string
	Workspace string
	// Channel is where the command was typed; "here" delivers there.
	Channel string
	UserID  string
	// Agent is the agent addressed; "" is the default agent.
	Agent string
	Text  string
	// TimeZone is the person's time zone when the platform knows it.
	TimeZone string
}

// CommandHelp lists the commands.
const CommandHelp = "Scheduling commands:\n" +
	"• `remind in 2h -- call Ana` · `remind tomorrow 9:00 -- standup notes` · `reminders` · `reminder cancel <name>`\n" +
	"• `routine add <name> every 4h -- <instruction>` · `routine add <name> cron 0 8 * * 1-5 tz America/New_York to here template briefing -- <instruction>`\n" +
	"• `routines` · `routine change <name> every 2h` · `routine change <name> -- <new instruction>` · `routine pause|resume|delete <name>`\n" +
	"• `pulses` · `pulse pause|resume|delete <name>`\n" +
	"• `loop start <name> [every 1h] [max 10] [budget 200000] [deadline 2026-03-09T17:00:00Z] -- <goal>` · `loops` · `loop stop|resume|delete <name>`"

// Command runs a scheduling command and returns the reply to show the
// person. A malformed command returns an error wrapping ErrInvalid whose
// text can be shown as is.
func (s *Scheduler) Command(ctx context.Context, r CommandRequest) (string, error) {
	if r.Platform == "" || r.UserID == "" {
		return "", invalid("a command needs the platform and the person typing it")
	}
	if r.Agent == "" {
		r.Agent = s.svc.Agents().Default().Name
	}
	head, rest := splitInstruction(r.Text)
	words := strings.Fields(head)
	if len(words) == 0 {
		return CommandHelp, nil
	}
	verb := strings.ToLower(words[0])
	args := words[1:]
	switch verb {
	case "help":
		return CommandHelp, nil
	case "remind":
		return s.commandRemind(ctx, r)
	case "reminders", "routines", "pulses", "loops":
		return s.commandList(ctx, r, kindOfWord(strings.TrimSuffix(verb, "s")))
	case "reminder", "routine", "pulse", "loop":
		kind := kindOfWord(verb)
		if len(args) == 0 {
			return "", invalid("%s what? %s", verb, CommandHelp)
		}
		sub := strings.ToLower(args[0])
		args = args[1:]
		switch {
		case sub == "list":
			return s.commandList(ctx, r, kind)
		case sub == "add" && kind == store.ScheduleRoutine:
			return s.commandRoutineAdd(ctx, r, args, rest)
		case sub == "start" && kind == store.ScheduleLoop:
			return s.commandLoopStart(ctx, r, args, rest)
		case sub == "change" && kind == store.ScheduleRoutine:
			return s.commandRoutineChange(ctx, r, args, rest)
		case sub == "pause" || sub == "resume" || sub == "delete" || sub == "cancel" || sub == "stop":
			if len(args) != 1 {
				return "", invalid("%s %s needs one name", verb, sub)
			}
			return s.commandState(ctx, r, kind, sub, args[0])
		}
		return "", invalid("unknown command %q. %s", verb+" "+sub, CommandHelp)
	}
	return "", invalid("unknown command %q. %s", verb, CommandHelp)
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

// RemindCommand sets a reminder from a platform's remind command with its
// own when and what fields (Discord's /remind).
func (s *Scheduler) RemindCommand(ctx context.Context, r CommandRequest, when, what string) (string, error) {
	if r.Agent == "" {
		r.Agent = s.svc.Agents().Default().Name
	}
	at, err := ParseWhen(when, s.now(), r.TimeZone)
	if err != nil {
		return "", err
	}
	return s.remindAt(ctx, r, at, what)
}

func (s *Scheduler) remindAt(ctx context.Context, r CommandRequest, at time.Time, what string) (string, error) {
	sc, err := s.Remind(ctx, RemindParams{
		Agent: r.Agent, Owner: r.UserID, Platform: r.Platform, Workspace: r.Workspace,
		At: at, Text: what, TimeZone: r.TimeZone, Source: "command",
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("OK, I'll remind you %s by DM (%s). Cancel with `reminder cancel %s`.",
		localTime(at, r.TimeZone), strings.TrimSpace(what), sc.Name), nil
}

// commandRemind reads "remind [me] <when> [to] <what>" or
// "remind <when> -- <what>".
func (s *Scheduler) commandRemind(ctx context.Context, r CommandRequest) (string, error) {
	text := strings.TrimSpace(r.Text)
	text = strings.TrimSpace(text[len("remind"):])
	text = strings.TrimPrefix(text, "me ")
	now := s.now()
	if head, what := splitInstruction(text); what != "" {
		at, err := ParseWhen(head, now, r.TimeZone)
		if err != nil {
			return "", err
		}
		return s.remindAt(ctx, r, at, what)
	}
	words := strings.Fields(text)
	// The longest prefix that reads as a time is the when; the rest is what.
	for n := min(len(words)-1, 4); n >= 1; n-- {
		at, err := ParseWhen(strings.Join(words[:n], " "), now, r.TimeZone)
		if err != nil {
			continue
		}
		what := words[n:]
		if len(what) > 1 && strings.EqualFold(what[0], "to") {
			what = what[1:]
		}
		return s.remindAt(ctx, r, at, strings.Join(what, " "))
	}
	return "", invalid("say when and what, as in `remind in 2h -- call Ana` or `remind tomorrow 9:00 to send the report`")
}

func (s *Scheduler) commandList(ctx context.Context, r CommandRequest, kind store.ScheduleKind) (string, error) {
	list, err := s.List(ctx, r.Agent, kind)
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
		lines = append(lines, "• "+Describe(sc))
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

func (s *Scheduler) commandRoutineAdd(ctx context.Context, r CommandRequest, args []string, instruction string) (string, error) {
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
	channel, err := deliverTo(place{Channel: r.Channel}, o["to"])
	if err != nil {
		return "", err
	}
	tz := o["tz"]
	if tz == "" {
		tz = r.TimeZone
	}
	sc, err := s.CreateSchedule(ctx, ScheduleParams{
		Kind: store.ScheduleRoutine, Agent: r.Agent, Name: name, Owner: r.UserID,
		Target: Target{Platform: r.Platform, Workspace: r.Workspace, Channel: channel},
		Spec:   spec, TimeZone: tz, Instruction: instruction, Template: o["template"],
		Missed: store.MissedPolicy(o["missed"]), Source: "command",
	})
	if err != nil {
		return "", err
	}
	return "Routine created: " + Describe(sc), nil
}

func (s *Scheduler) commandRoutineChange(ctx context.Context, r CommandRequest, args []string, instruction string) (string, error) {
	if len(args) == 0 {
		return "", invalid("routine change needs a name")
	}
	sc, err := s.mine(ctx, r, store.ScheduleRoutine, args[0])
	if err != nil {
		return "", err
	}
	o, err := options(args[1:])
	if err != nil {
		return "", err
	}
	var c Change
	if spec, ok, err := specFromOptions(o); err != nil {
		return "", err
	} else if ok {
		c.Spec = &spec
	}
	if tz, ok := o["tz"]; ok {
		c.TimeZone = &tz
	}
	if to, ok := o["to"]; ok {
		ch, err := deliverTo(place{Channel: r.Channel}, to)
		if err != nil {
			return "", err
		}
		c.Channel = &ch
	}
	if instruction != "" {
		c.Instruction = &instruction
	}
	if c == (Change{}) {
		return "", invalid("routine change %s: change what? Give every, cron, tz, to, or -- a new instruction", sc.Name)
	}
	sc, err = s.Update(ctx, sc, c)
	if err != nil {
		return "", err
	}
	return "Routine changed: " + Describe(sc), nil
}

func (s *Scheduler) commandLoopStart(ctx context.Context, r CommandRequest, args []string, goal string) (string, error) {
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
	var lc LoopConfig
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
		t, err := ParseWhen(v, s.now(), r.TimeZone)
		if err != nil {
			return "", err
		}
		lc.Deadline = &t
	}
	sc, err := s.CreateSchedule(ctx, ScheduleParams{
		Kind: store.ScheduleLoop, Agent: r.Agent, Name: strings.ToLower(args[0]), Owner: r.UserID,
		Target: Target{Platform: r.Platform, Workspace: r.Workspace, Channel: r.Channel},
		Spec:   spec, TimeZone: r.TimeZone, Instruction: goal, Loop: &lc, Source: "command",
	})
	if err != nil {
		return "", err
	}
	return "Goal loop started: " + Describe(sc) + ". I'll DM you when it ends or needs you.", nil
}

// mine finds a schedule the person may change: in this workspace, and
// theirs (or nobody's).
func (s *Scheduler) mine(ctx context.Context, r CommandRequest, kind store.ScheduleKind, name string) (*store.Schedule, error) {
	sc, err := s.Find(ctx, r.Agent, kind, strings.ToLower(name))
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

func (s *Scheduler) commandState(ctx context.Context, r CommandRequest, kind store.ScheduleKind, verb, name string) (string, error) {
	sc, err := s.mine(ctx, r, kind, name)
	if err != nil {
		return "", err
	}
	switch verb {
	case "pause", "stop":
		if kind == store.ScheduleLoop && verb == "stop" {
			reason := "stopped by " + r.UserID
			done, from := store.ScheduleDone, sc.State
			if _, err := s.st.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{
				ID: sc.ID, State: &done, StateReason: &reason, ClearNextRun: true, ExpectState: &from, Now: s.now(),
			}); err != nil {
				return "", fmt.Errorf("stopping loop %q: %w", sc.Name, err)
			}
			return fmt.Sprintf("Goal loop %s stopped.", sc.Name), nil
		}
		if _, err := s.Pause(ctx, sc, "paused by "+r.UserID); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %s paused.", kind, sc.Name), nil
	case "resume":
		sc, err = s.Resume(ctx, sc)
		if err != nil {
			return "", err
		}
		return "Resumed: " + Describe(sc), nil
	}
	if err := s.Delete(ctx, sc); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s %s deleted.", kind, sc.Name), nil
}
