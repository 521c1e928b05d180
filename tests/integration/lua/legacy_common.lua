-- The 0.5 way: options are string globals, converted by the script's own set_vars().
function set_vars()
   rows = tonumber(legacy_rows) or 20
end

function prepare()
   set_vars()
   db_connect()
   db_query("CREATE TABLE lua_legacy (id INTEGER NOT NULL, v INTEGER, PRIMARY KEY (id))")
   db_bulk_insert_init("INSERT INTO lua_legacy (id, v) VALUES")
   for i = 1, rows do
      db_bulk_insert_next(string.format("(%d, %d)", i, sb_rand(1, 100)))
   end
   db_bulk_insert_done()
   print("prepared " .. rows .. " rows")
end

function cleanup()
   db_query("DROP TABLE IF EXISTS lua_legacy")
end
