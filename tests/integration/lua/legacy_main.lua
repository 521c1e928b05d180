-- A 0.5-style script: it finds its sibling through the `test` global, as the 0.5
-- scripts (tests/db/oltp.lua) do.
pathtest = string.match(test, "(.*/)") or ""
dofile(pathtest .. "legacy_common.lua")

function thread_init(thread_id)
   set_vars()
   stmt = db_prepare("UPDATE lua_legacy SET v = v + 1 WHERE id = ?")
   params = {1}
   db_bind_param(stmt, params)
end

function event(thread_id)
   db_query("BEGIN")
   db_query("SELECT v FROM lua_legacy WHERE id = " .. sb_rand_uniform(1, rows))
   params[1] = sb_rand(1, rows)
   db_execute(stmt)
   db_query("COMMIT")
end
