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

UPDATE api_token SET type = 'PERSONAL_ACCESS_TOKEN', key = encode(sha256(convert_to(t.token, 'UTF8')), 'hex')
FROM (VALUES
  (94001, 'd2pat_EMi4vUP6lQIv4P9Dib3LY1l1BU5tWXpp1141566371'),
  (94003, 'd2pat_gZGPOgx7oXSYJjAcLX7vEosfR3CTh7cV4281150335'),
  (94004, 'd2pat_E5emSnrGkGewbFjsjFXns7r8Z2AuO2qL1716974145'),
  (94005, 'd2pat_5Bnr5f6IYo3IFTjB7nsgk9e2zYL6ySSp3970468793'),
  (94006, 'd2pat_LgrgK2qD9Df8EutLYPDphal4ugZsEWCr1294458608'),
  (94007, 'd2pat_aV5JpuQPofsMO7Ndvtvji19xqyPeOFMF0017558753')
) AS t(id, token)
WHERE api_token.apitokenid = t.id;
UPDATE api_token SET type = 'PERSONAL_ACCESS_TOKEN' WHERE type = 'PERSONAL_ACCESS_TOKEN_V1';
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM api_token WHERE type <> 'PERSONAL_ACCESS_TOKEN') THEN
    RAISE EXCEPTION '2.41-to-2.40: api_token still holds a token 2.40 cannot read';
  END IF;
END
$$;
