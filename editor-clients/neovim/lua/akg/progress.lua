-- akg.progress: shows the server's $/progress for akg jobs.
--
-- Neovim 0.7 to 0.9 keep progress in client.messages and fire
-- `User LspProgressUpdate`; 0.10+ fire `LspProgress` with the value in
-- ev.data. Both end up in M.update(token, value).
local M = {}

--- token -> { title, message, percentage, done }
M.active = {}
--- Every update seen, newest last (capped), for :AkgStatus and tests.
M.log = {}
local LOG_CAP = 200
local display = 'echo'

local function show(text)
  if display == 'echo' then
    vim.api.nvim_echo({ { text, 'ModeMsg' } }, false, {})
  elseif display == 'notify' then
    vim.notify(text, vim.log.levels.INFO, { title = 'akg' })
  end
end

function M.format(p)
  local pct = p.percentage and string.format(' %d%%', p.percentage) or ''
  local msg = p.message and (': ' .. p.message) or ''
  return string.format('akg %s%s%s%s', p.title or 'job', pct, msg, p.done and ' (done)' or '')
end

function M.update(token, value)
  if type(value) ~= 'table' then
    return
  end
  local p = M.active[token] or {}
  if value.kind == 'begin' then
    p = { title = value.title, message = value.message, percentage = value.percentage }
  elseif value.kind == 'report' then
    p.message = value.message or p.message
    p.percentage = value.percentage or p.percentage
  elseif value.kind == 'end' then
    p.message = value.message or p.message
    p.done = true
  end
  M.active[token] = p
  table.insert(M.log, { token = token, kind = value.kind, title = p.title, message = p.message })
  if #M.log > LOG_CAP then
    table.remove(M.log, 1)
  end
  show(M.format(p))
  if p.done then
    M.active[token] = nil
  end
end

--- A one-line summary for a statusline: "" when nothing runs.
function M.status()
  local parts = {}
  for _, p in pairs(M.active) do
    table.insert(parts, M.format(p))
  end
  return table.concat(parts, ' | ')
end

--- Neovim 0.7-0.9: client.messages.progress holds the state; we read our
--- client's entries (tokens "akg-job-N") and keep the rest for other plugins.
local function from_client_messages(client_name)
  for _, client in ipairs(vim.lsp.get_active_clients()) do
    if client.name == client_name and client.messages and client.messages.progress then
      for token, ctx in pairs(client.messages.progress) do
        if type(token) == 'string' and token:match('^akg%-job%-') and ctx.title then
          local seen = M.active[token]
          local kind = ctx.done and 'end' or (seen and 'report' or 'begin')
          if not seen or seen.message ~= ctx.message or seen.percentage ~= ctx.percentage or ctx.done then
            M.update(token, { kind = kind, title = ctx.title, message = ctx.message, percentage = ctx.percentage })
          end
          if ctx.done then
            client.messages.progress[token] = nil
          end
        end
      end
    end
  end
end

function M.setup(opts, client_name)
  display = opts.progress
  local group = vim.api.nvim_create_augroup('akg_progress', { clear = true })
  if vim.fn.has('nvim-0.10') == 1 then
    vim.api.nvim_create_autocmd('LspProgress', {
      group = group,
      callback = function(ev)
        local client = vim.lsp.get_client_by_id(ev.data.client_id)
        local params = ev.data.params or {}
        if client and client.name == client_name then
          M.update(params.token, params.value)
        end
      end,
    })
  else
    vim.api.nvim_create_autocmd('User', {
      group = group,
      pattern = 'LspProgressUpdate',
      callback = function()
        from_client_messages(client_name)
      end,
    })
  end
end

return M
