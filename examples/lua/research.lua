--[[
name: research
description: Research several topics at once, one fanout arm per topic, and gather the findings into one report
input: {path: topics.txt, description: one topic a line (by default three sample topics)}
output: {path: report.md, description: "the findings, one section per topic"}
]]
-- Each arm runs in a Lua state of its own, concurrently: it sees its
-- argument table, its index, store, docs, untrusted and the safe
-- libraries, but none of this script's locals.
local topics = {}
local text = store.exists("topics.txt") and store.read("topics.txt") or "chunking\nretention\nforks\n"
for line in text:gmatch("[^\n]+") do
  topics[#topics + 1] = {topic = line}
end

local function research(t, i)
  -- Each arm writes its own notes: two arms writing one path would be a
  -- write-write race, an error. Appending to one log is legal.
  local path = "notes/" .. t.topic:gsub("%W+", "-") .. ".md"
  store.write(path, "## " .. t.topic .. "\n\nFindings of arm " .. i .. " on " .. t.topic .. ".\n")
  store.append("research.log", "arm " .. i .. " researched " .. t.topic .. "\n")
  return {topic = t.topic, path = path, lines = #store.read(path, 1)}
end

local results = fanout(research, unpack(topics))

local report = {"# Report", ""}
for _, r in ipairs(results) do
  report[#report + 1] = store.read(r.path)
end
store.write("report.md", table.concat(report, "\n"))
print(#results .. " topics researched")
