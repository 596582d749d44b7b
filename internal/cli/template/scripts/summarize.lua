--[[
name: summarize
description: Keep lines 20 to 40 of a document as notes/summary.md, wrapped as untrusted text, and log the run.
input:
  path: input/document.md
  description: The document to summarise.
output:
  path: notes/summary.md
  description: The excerpt, inside the untrusted envelope, ready to go into a prompt.
]]

-- satchel run scripts/summarize.lua --input-file report.md
local doc = "input/document.md"
local slice = store.read(doc, 20, 40) -- lines 20 to 40 only ("" when the document is shorter)
if slice == "" then
  slice = store.read(doc) -- a short document: keep all of it
end

-- Stored text goes back into a prompt only inside the untrusted envelope.
store.write("notes/summary.md", "# Summary of " .. doc .. "\n\n" .. untrusted(slice) .. "\n")
store.append("log.txt", "summarized " .. doc .. " " .. args .. "\n")
