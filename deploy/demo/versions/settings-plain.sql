-- System settings as a DHIS2 2.42 server writes them (plain text since 2.42/V2_42_18; the same
-- settings as settings-json.sql, whose applicationTitle translation 2.42 keeps in the datastore,
-- not here), for the 2.43 steps to migrate (included by versions/2.43.sql, 2.44.sql).
INSERT INTO systemsetting (systemsettingid, name, value) VALUES
    (95001, 'applicationTitle', 'Sierra Leone demo'),
    (95002, 'keyCalendar', 'iso8601'),
    (95003, 'keyDateFormat', 'yyyy-MM-dd'),
    (95004, 'keyStyle', 'light_blue/light_blue.css'),
    (95005, 'keyDataImportStrictDataElements', 'false'),
    (95006, 'minPasswordLength', '8');
