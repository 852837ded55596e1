-- pytorch/examples' word_language_model data.Corpus: train.txt, valid.txt and test.txt of a
-- folder read in that order, each line's words (split on white space) and '<eos>' numbered in
-- order of first appearance across the three files. Word ids are 1-based, as every index in Lua.
local torch = require 'torch'

local M = {}

-- the ids of one file's words, adding new words to `dictionary`
local function tokenize(path, dictionary)
  local file, err = io.open(path, 'r')
  if not file then
    error(('word_language_model: cannot read %s (%s): hp.data must be a folder of train.txt, ' ..
           'valid.txt and test.txt'):format(path, err), 0)
  end
  local ids = {}
  local function add(word)
    local id = dictionary.word2idx[word]
    if not id then
      id = #dictionary + 1
      dictionary[id] = word
      dictionary.word2idx[word] = id
    end
    ids[#ids + 1] = id
  end
  for line in file:lines() do
    for word in line:gmatch('%S+') do add(word) end
    add('<eos>')
  end
  file:close()
  if #ids == 0 then error(('word_language_model: %s holds no line'):format(path), 0) end
  return torch.tensor(ids, {dtype = 'int64'})
end

-- {dictionary = {word1, word2, ..., word2idx = {word = id}}, train, valid, test} (id tensors)
function M.read(folder)
  local dictionary = {word2idx = {}}
  local corpus = {dictionary = dictionary}
  for _, split in ipairs({'train', 'valid', 'test'}) do
    corpus[split] = tokenize(folder .. '/' .. split .. '.txt', dictionary)
  end
  return corpus
end

return M
