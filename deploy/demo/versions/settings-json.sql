-- System settings as DHIS2 2.39-2.41 write them (included by versions/2.41.sql, 2.40.sql,
-- 2.39.sql): value the Jackson JSON of the setting's value (SystemSetting.setDisplayValue
-- @2.41.9.1: strings quoted, numbers and booleans bare), translations a jsonb map of locale to
-- text ('{}' when none; SystemSetting.hbm.xml jbObject). No credentialsExpires (docs/DEMO.md).
INSERT INTO systemsetting (systemsettingid, name, value, translations) VALUES
    (95001, 'applicationTitle', '"Sierra Leone demo"', '{"fr": "Démo Sierra Leone"}'),
    (95002, 'keyCalendar', '"iso8601"', '{}'),
    (95003, 'keyDateFormat', '"yyyy-MM-dd"', '{}'),
    (95004, 'keyStyle', '"light_blue/light_blue.css"', '{}'),
    (95005, 'keyDataImportStrictDataElements', 'false', '{}'),
    (95006, 'minPasswordLength', '8', '{}');
