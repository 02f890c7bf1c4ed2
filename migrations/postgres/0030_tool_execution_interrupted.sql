-- A tool call cut off by a crash or a stop ends its marker as
-- 'interrupted' when the resumed turn records it so (it never runs again),
-- instead of staying 'executing' for ever. Expand only: a release before
-- this one never writes the new state and reads a marker only to see that
-- it exists.
ALTER TABLE tool_executions
    DROP CONSTRAINT tool_executions_state_check,
    ADD CONSTRAINT tool_executions_state_check
        CHECK (state IN ('executing', 'finished', 'interrupted'));
