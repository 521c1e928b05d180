-- What lua/bridge.c serves in C (prepared statements with integer, NULL and string
-- parameters, set_rand_str's among them, reads and writes) and what it leaves to the Python bridge (a plain query, a
-- sleep, a failed statement restarted as an ignorable error, an event stopping its thread),
-- in one event.  tests/integration/test_lua_bridge.py runs it both ways.

function prepare()
   local con = sysbench.sql.driver():connect()
   con:query("DROP TABLE IF EXISTS sbtest_bridge")
   con:query("CREATE TABLE sbtest_bridge (id INTEGER NOT NULL PRIMARY KEY, k INTEGER, c VARCHAR(40))")
   for i = 1, 20 do
      con:query(string.format("INSERT INTO sbtest_bridge (id, k, c) VALUES (%d, %d, 'row %d')", i, i * 10, i))
   end
end

function cleanup()
   sysbench.sql.driver():connect():query("DROP TABLE IF EXISTS sbtest_bridge")
end

function thread_init()
   con = sysbench.sql.driver():connect()
   sel = con:prepare("SELECT c FROM sbtest_bridge WHERE id = ?")
   sp = sel:bind_create(sysbench.sql.type.INT)
   sel:bind_param(sp)
   upd = con:prepare("UPDATE sbtest_bridge SET k = k + 1 WHERE id = ?")
   up = upd:bind_create(sysbench.sql.type.INT)
   upd:bind_param(up)
   ins = con:prepare("INSERT INTO sbtest_bridge (id, k, c) VALUES (?, ?, ?)")
   ip = {ins:bind_create(sysbench.sql.type.INT), ins:bind_create(sysbench.sql.type.INT),
         ins:bind_create(sysbench.sql.type.VARCHAR, 40)}
   ins:bind_param(ip[1], ip[2], ip[3])
   n, nulls, rows = 0, 0, 0
end

function event()
   n = n + 1
   sp:set(n % 20 + 1)
   local rs = sel:execute()
   rows = rows + rs.nrows
   up:set(n % 20 + 1)
   upd:execute()
   local id = 1000 * (sysbench.tid + 1) + n
   if n % 5 == 0 then id = id - 1 end        -- the last event's key: ignored, the event restarts
   ip[1]:set(id)
   ip[2]:set(nil)
   if n % 3 == 0 then
      ip[3]:set_rand_str("@@@-" .. string.rep("#", 44))   -- drawn into the parameter, cut to 40
   else
      ip[3]:set("\195\188-" .. n)            -- a UTF-8 string
   end
   ins:execute()
   if n % 7 == 0 then
      nulls = tonumber(con:query_row("SELECT COUNT(*) FROM sbtest_bridge WHERE k IS NULL"))
   end
   if n % 11 == 0 then ffi.C.usleep(1000) end
   if n >= 60 then return true end           -- stops its thread; not counted
end

function thread_done()
   print(string.format("thread %d: n=%d rows=%d", sysbench.tid, n, rows))
end
