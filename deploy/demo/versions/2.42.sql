-- DHIS2 2.42 (2.42.5.2): the demo database exactly as schema.sql + generate.sql make it, plus
-- DHIS2's Flyway history of tag 2.42.5.2 (highest migrations 2.40.24, 2.41.49, 2.42.52; see
-- flyway.sql). Applied by deploy/demo/load.sh after generate.sql, in the same transaction.
-- The odd rows a reader must not trip over: installed_rank 1 is Flyway's baseline (version '1',
-- type BASELINE); the last row is a failed attempt at 2.43's first migration (2.43.1, success
-- false: a 2.43 server tried to upgrade the database and the 2.42 one was put back); and text
-- order is not version order ('2.42.9' > '2.42.52' as text).

\ir flyway.sql
SELECT pg_temp.dvexport_demo_flyway('242', '2.43.1') \g /dev/null
