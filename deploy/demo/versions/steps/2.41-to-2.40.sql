-- Step: DHIS2 2.41's schema (steps/2.42-to-2.41.sql) back to DHIS2 2.40's (2.40.11.1). Included
-- by versions/2.40.sql and 2.39.sql. The migrations are dhis2/dhis2-core's, tag 2.41.9.1, under
-- dhis-2/dhis-support/dhis-support-db-migration/src/main/resources/org/hisp/dhis/db/migration/2.41/:
--   V2_41_30__Rename_DataElementCategoryOption_to_CategoryOption.sql  renamed BOTH
--       dataelementcategoryoption -> categoryoption and dataelementcategory -> category (no Java
--       migration renames the category table; schema.sql's header says otherwise). Constraint
--       names are kept by a rename: V2_40_17 named the option shortname constraint
--       dataelementcategoryoption_unique_shortname (schema.sql: categoryoption_unique_shortname)
--   V2_41_49__Update_api_token_tokentype.sql  PERSONAL_ACCESS_TOKEN -> PERSONAL_ACCESS_TOKEN_V1
--   V2_41_50__Update_dataset_timliness_to_double.sql  timelydays integer -> double precision
-- userrolerestrictions stays int8 with its FK: 2.40/V2_40_25__Fix_hibernate_validate_ddl.sql
-- (first in tag 2.40.1, in 2.40.11.1) does what 2.41's V2_41_16 does.
--
-- API tokens: 2.40 has one token type, PERSONAL_ACCESS_TOKEN, prefix d2pat
-- (dhis-api .../security/apikey/ApiTokenType.java @2.40.11.1). A token is
-- "d2pat_" + 32 characters of [0-9A-Za-z] + the CRC-32 of those 32 characters as 10 decimal
-- digits, zero padded (ApiTokenServiceImpl.initToken: String.format("%s_%s%010d", ...)), 48 in
-- all; api_token.key is the lowercase hex SHA-256 of the whole token's UTF-8 bytes
-- (ApiTokenServiceImpl.hashKey, Guava Hashing.sha256; Dhis2ApiTokenFilter hashes the header's
-- token and looks the key up: 2.40 never checks a checksum). 2.41's d2p_ (V2) tokens cannot
-- exist in 2.40: each becomes the d2pat_ token a 2.40 server would have minted from the first 32
-- characters of its code (CRC-32 of exactly those 32 bytes), with the same id, owner, expiry and
-- attributes (docs/DEMO.md lists them). Note: 2.41+ checks V1 checksums over the code's bytes
-- plus 3 zero bytes (CRC32Utils: ByteBuffer.array() of the encoder's buffer), so these 2.40
-- tokens fail 2.41's check, and the demo's own d2pat_ token (94002, unchanged) carries the 2.41
-- form: 2.40 accepts both, by key alone.

ALTER TABLE category RENAME TO dataelementcategory;
ALTER TABLE categoryoption RENAME TO dataelementcategoryoption;
ALTER TABLE dataelementcategoryoption
    RENAME CONSTRAINT categoryoption_unique_shortname TO dataelementcategoryoption_unique_shortname;

ALTER TABLE dataset ALTER COLUMN timelydays TYPE integer USING round(timelydays)::integer;

-- The keys (lowercase hex SHA-256 of each whole d2pat_ token; the tokens themselves are made as
-- docs/DEMO.md says and are not kept in this file).
UPDATE api_token SET type = 'PERSONAL_ACCESS_TOKEN', key = t.key
FROM (VALUES
  (94001, 'a1aa5c9a18af9707e568670934123c4aaccc2267c298aef86ed736e985e6c2d5'),
  (94003, 'adaad225875e3d40ef98aac66d7f94fa7f14c75d490bb242c62a2d78f8301d2d'),
  (94004, 'b67be318dcb424e24ef69aab896e6365a44403c1d6e8318d8bdea6de3d2b318a'),
  (94005, '20c9b54aa526eea311ac895076d8133aa63ef274485a7cf0e51e3240b4e1e721'),
  (94006, '3b027ff3b41bd8e3f9acb00a109b5f8af1415e900fcbae08907efffa44bfaee7'),
  (94007, '557b1d1c2fea00c7c6de8e26346625ea7683af4d9d0f6bca39c9b79df2a5ad3d')
) AS t(id, key)
WHERE api_token.apitokenid = t.id;
UPDATE api_token SET type = 'PERSONAL_ACCESS_TOKEN' WHERE type = 'PERSONAL_ACCESS_TOKEN_V1';
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM api_token WHERE type <> 'PERSONAL_ACCESS_TOKEN') THEN
    RAISE EXCEPTION '2.41-to-2.40: api_token still holds a token 2.40 cannot read';
  END IF;
END
$$;
