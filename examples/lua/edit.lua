--[[
name: edit
description: Rename a term across every Markdown file of the workspace, all or nothing (run it with --atomic)
]]
-- Usage: satchel --db team.db run --atomic edit.lua OLD NEW
-- With --atomic the edits are made on a fork of the thread and published
-- in one commit only if every one succeeds: a file where OLD is ambiguous
-- stops the run and leaves the thread as it was.
local old, new = arg[1] or "draft", arg[2] or "final"
if not store.exists("docs/a.md") and #store.glob("**/*.md") == 0 then
  -- A sample to edit when the workspace is empty.
  store.write("docs/a.md", "# The draft plan\n")
  store.write("docs/b.md", "Status: draft\n")
end
local n = 0
for _, path in ipairs(store.glob("**/*.md")) do
  if store.read(path):find(old, 1, true) then
    store.str_replace(path, old, new)
    n = n + 1
  end
end
print("renamed " .. old .. " to " .. new .. " in " .. n .. " files")
