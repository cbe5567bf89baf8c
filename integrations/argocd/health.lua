-- Argo CD health check for crd-audit's SchemaAudit reports (crd-audit.dev/v1alpha1).
--   Healthy      the status describes the report's current generation and Ready is True
--   Progressing  no status yet, a status of an older generation, an audit running
--                (Reconciling True, or Ready Unknown), or no Ready condition yet
--   Degraded     Ready is False: stuck objects, a non-structural schema, invalid
--                objects, a stored version no longer served, a failed conversion, ...
-- The message is the Ready condition's message (its reason when the message is empty).
-- Only base Lua is used: Argo CD runs argocd-cm scripts without the string library.
local function find(conditions, wanted)
  if conditions == nil then
    return nil
  end
  for _, c in ipairs(conditions) do
    if c.type == wanted then
      return c
    end
  end
  return nil
end

local function describe(c, fallback)
  if c ~= nil and c.message ~= nil and c.message ~= "" then
    return c.message
  end
  if c ~= nil and c.reason ~= nil and c.reason ~= "" then
    return c.reason
  end
  return fallback
end

local status = obj.status
if status == nil or status.observedGeneration == nil then
  return { status = "Progressing", message = "Waiting for the first audit" }
end
local generation = obj.metadata.generation
if generation ~= nil and status.observedGeneration ~= generation then
  return {
    status = "Progressing",
    message = "Waiting for the audit of generation " .. generation
      .. " (the status describes generation " .. status.observedGeneration .. ")",
  }
end

local ready = find(status.conditions, "Ready")
local reconciling = find(status.conditions, "Reconciling")
if reconciling ~= nil and reconciling.status == "True" then
  if ready ~= nil then
    return { status = "Progressing", message = describe(ready, "Auditing") }
  end
  return { status = "Progressing", message = describe(reconciling, "Auditing") }
end
if ready == nil then
  return { status = "Progressing", message = "Waiting for the Ready condition" }
end
if ready.status == "True" then
  return { status = "Healthy", message = describe(ready, "Ready") }
end
if ready.status == "False" then
  return { status = "Degraded", message = describe(ready, "Not ready") }
end
return { status = "Progressing", message = describe(ready, "Auditing") }
