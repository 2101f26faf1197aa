-- DHIS2's own jsonb sharing functions, loaded into the authorization tests' database as an
-- independent reference for dvexport's SQL (tests/integration/authorization_test.cc).
--
-- Copied verbatim (the four sharing functions; regexp_search left out) from dhis2/dhis2-core,
-- dhis-2/dhis-support/dhis-support-db-migration/src/main/resources/org/hisp/dhis/db/migration/
-- 2.36/V2_36_9__Add_custom_jsonb_functions_for_sharing.sql (unchanged up to 2.42; read at
-- dhis2-core commit 3f8c14a02b3).
--
-- Copyright (c) 2004-2025, University of Oslo. All rights reserved.
-- Licensed under the BSD 3-Clause License:
-- Redistribution and use in source and binary forms, with or without modification, are
-- permitted provided that the following conditions are met: 1. Redistributions of source code
-- must retain the above copyright notice, this list of conditions and the following
-- disclaimer. 2. Redistributions in binary form must reproduce the above copyright notice,
-- this list of conditions and the following disclaimer in the documentation and/or other
-- materials provided with the distribution. 3. Neither the name of the copyright holder nor
-- the names of its contributors may be used to endorse or promote products derived from this
-- software without specific prior written permission.
-- THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND ANY EXPRESS
-- OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF
-- MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE
-- COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL,
-- EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE
-- GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED
-- AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING
-- NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED
-- OF THE POSSIBILITY OF SUCH DAMAGE.

-- This will use the index gin ( (sharing->'users')  ) ;
CREATE or replace FUNCTION jsonb_has_user_id(jsonb, text )
RETURNS bool
AS $$
select  $1->'users' ? $2
$$
LANGUAGE SQL IMMUTABLE PARALLEL SAFE;

CREATE or replace FUNCTION jsonb_check_user_access(jsonb, text, text)
RETURNS bool
AS $$
select  $1->'users'->$2->>'access' like $3
$$
LANGUAGE SQL IMMUTABLE PARALLEL SAFE;

-- Second parameter is an array of userGroup uuid. e.g. '{248ed37f-31a4-37ac-9bd8-0273bfb566ac,09c0b68f-1fb7-40a0-3575-bf4687a1d9dd}'
-- This function uses the index  gin ( (sharing->'userGroups')  ) ;
CREATE OR replace FUNCTION jsonb_has_user_group_ids(jsonb,  text)
RETURNS bool
AS $$
SELECT   $1->'userGroups' ?| $2::text[];
$$
LANGUAGE SQL IMMUTABLE PARALLEL SAFE;

CREATE OR replace FUNCTION jsonb_check_user_groups_access(jsonb, text, text)
RETURNS bool
AS $$
SELECT exists(
         SELECT 1
         FROM  jsonb_each($1->'userGroups') je
         WHERE je.key = ANY ($3::text[])
         AND je.value->>'access' LIKE $2
     );
$$
LANGUAGE SQL IMMUTABLE PARALLEL SAFE;

