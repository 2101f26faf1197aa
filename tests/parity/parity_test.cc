// DHIS2 2.42 parity of every export filter and id scheme, through a real
// dvexport server in-process over loopback, against fixture.sql. Every
// expectation is written out here from the fixture by hand; values are
// numbered 1..10 so that a filter's answer is the list of its value numbers.
//
// The fixture's values (all of 2024; deleted only 8):
//   value  element  period  org unit  coc      aoc       lastupdated
//   1      Alpha    202401  ClinA     default  default   2024-02-01 10:00
//   2      Bravo    202401  ClinA     default  default   2024-03-15 12:30:00.5
//   3      Charlie  202401  ClinB     default  default   2024-04-01 00:00
//   4      Delta    202402  ClinC     default  default   2024-03-01 10:00
//   5      Alpha    202402  ClinB     default  AP1       2024-03-01 10:00
//   6      Alpha    202402  ClinB     default  BP1       2024-03-01 10:00
//   7      Alpha    202402  ClinB     default  AP2       2024-03-01 10:00
//   8      Bravo    202402  ClinA     default  default   2024-03-02 10:00 (deleted)
//   9      Delta    2024Q1  ClinA     default  default   2999-01-01 00:00
//   10     Alpha    202401  Root      Other    default   2024-02-01 10:00
// Data sets: dsMonthly01 = Alpha, Bravo; dsOther0002 = Charlie. Element group
// degGroup001 = Charlie, Delta. Unit groups: ougGroup001 = ClinA, ClinB;
// ougGroup002 = ClinA.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <pqxx/transaction>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "service/db/connection_pool.h"
#include "service/db/export_scope.h"
#include "service/dhis2/export_request_validator.h"
#include "service/server/export_server.h"
#include "tests/parity/fixture_database.h"

namespace dvexport {
namespace {

using v1::ExportFileRequest;
using v1::ExportRequest;

constexpr char kCsvHeader[] =
    "dataelement,period,orgunit,categoryoptioncombo,attributeoptioncombo,value,storedby,"
    "lastupdated,comment,followup,deleted\n";

// The 2.43 shape: period.iso, filled as DHIS2's migration does, and a period
// type 2.42 does not know (WeeklyFriday, V2_43_46) whose id only period.iso
// can give.
constexpr char kIsoColumnSql[] =
    "ALTER TABLE period ADD COLUMN iso character varying(50) UNIQUE; "
    "UPDATE period SET iso = CASE periodid WHEN 601 THEN '202401' WHEN 602 THEN '202402' "
    "  WHEN 603 THEN '2024Q1' END; "
    "ALTER TABLE period ALTER COLUMN iso SET NOT NULL; "
    "INSERT INTO periodtype (periodtypeid, name) VALUES (21, 'WeeklyFriday'); "
    "INSERT INTO period (periodid, periodtypeid, startdate, enddate, iso) "
    "  VALUES (604, 21, '2024-01-05', '2024-01-11', '2024FriW1'); "
    "INSERT INTO datavalue (dataelementid, periodid, sourceid, categoryoptioncomboid, "
    "  attributeoptioncomboid, value, storedby, created, lastupdated, comment, followup, "
    "  deleted) VALUES (101, 604, 402, 21, 21, '11', 'admin', '2024-01-12 10:00:00', "
    "  '2024-01-12 10:00:00', NULL, false, false)";

struct ExportResult {
  grpc::Status status;
  std::string bytes;
};

class Fixture {
 public:
  explicit Fixture(const std::string& suffix, const std::string& extra_sql)
      : database_(suffix, extra_sql) {
    if (database_.reader_conninfo().empty()) return;
    server::ServerOptions options;
    options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
    options.listen = "127.0.0.1:0";
    options.conninfo = database_.reader_conninfo();
    options.pool_size = 2;
    auto started = server::ExportServer::Start(options);
    if (!started.ok()) {
      ADD_FAILURE() << started.status();
      return;
    }
    server_ = *std::move(started);
    stub_ = v1::DataValueExport::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", server_->port()), grpc::InsecureChannelCredentials()));
  }

  // CountDataValues for "query"; -1 if it failed (the failure is reported).
  int64_t Count(const ExportRequest& query) const {
    if (stub_ == nullptr) return -1;
    grpc::ClientContext context;
    v1::CountResponse response;
    grpc::Status status = stub_->CountDataValues(&context, query, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return status.ok() ? response.count() : -1;
  }

  ExportResult Export(const ExportRequest& query, v1::Format format) const {
    ExportResult result;
    if (stub_ == nullptr) {
      result.status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "no fixture server");
      return result;
    }
    ExportFileRequest request;
    *request.mutable_query() = query;
    request.set_format(format);
    grpc::ClientContext context;
    auto reader = stub_->ExportFile(&context, request);
    v1::FileChunk chunk;
    while (reader->Read(&chunk)) {
      if (!chunk.has_trailer()) result.bytes += chunk.data();
    }
    result.status = reader->Finish();
    return result;
  }

  const std::string& conninfo() const { return database_.reader_conninfo(); }

 private:
  testing::FixtureDatabase database_;
  std::unique_ptr<server::ExportServer> server_;
  std::unique_ptr<v1::DataValueExport::Stub> stub_;
};

class ParityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { dhis2_242_ = new Fixture("", ""); }
  static void TearDownTestSuite() {
    delete dhis2_242_;
    delete dhis2_243_;
  }

  // Everything: both data sets and the element group, the root with its
  // children, all of 2024.
  static ExportRequest Everything() {
    ExportRequest query;
    query.add_data_set("dsMonthly01");
    query.add_data_set("dsOther0002");
    query.add_data_element_group("degGroup001");
    query.add_org_unit("ouRoot00001");
    query.set_children(true);
    query.set_start_date("2024-01-01");
    query.set_end_date("2024-12-31");
    return query;
  }

  static std::string Csv(const ExportRequest& query, const Fixture* fixture = dhis2_242_) {
    ExportResult result = fixture->Export(query, v1::FORMAT_CSV);
    EXPECT_TRUE(result.status.ok()) << result.status.error_message();
    return result.bytes;
  }

  static std::string Xml(const ExportRequest& query) {
    ExportResult result = dhis2_242_->Export(query, v1::FORMAT_XML);
    EXPECT_TRUE(result.status.ok()) << result.status.error_message();
    return result.bytes;
  }

  static std::string Json(const ExportRequest& query) {
    ExportResult result = dhis2_242_->Export(query, v1::FORMAT_JSON);
    EXPECT_TRUE(result.status.ok()) << result.status.error_message();
    return result.bytes;
  }

  // The CSV rows (without the header), sorted.
  static std::vector<std::string> CsvRows(const ExportRequest& query,
                                          const Fixture* fixture = dhis2_242_) {
    std::string csv = Csv(query, fixture);
    EXPECT_EQ(csv.substr(0, sizeof(kCsvHeader) - 1), kCsvHeader);
    std::vector<std::string> rows;
    if (csv.size() < sizeof(kCsvHeader) - 1) return rows;
    for (absl::string_view line :
         absl::StrSplit(csv.substr(sizeof(kCsvHeader) - 1), '\n', absl::SkipEmpty())) {
      rows.emplace_back(line);
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  }

  // The value column of every exported row, sorted: which values came out,
  // each as often as it came.
  static std::vector<int> Values(const ExportRequest& query, const Fixture* fixture = dhis2_242_) {
    std::vector<int> values;
    for (const std::string& row : CsvRows(query, fixture)) {
      std::vector<std::string> fields = absl::StrSplit(row, ',');
      EXPECT_EQ(fields.size(), 11u) << row;
      if (fields.size() == 11) values.push_back(std::stoi(fields[5]));
    }
    std::sort(values.begin(), values.end());
    return values;
  }

  static grpc::Status Error(const ExportRequest& query) {
    ExportResult result = dhis2_242_->Export(query, v1::FORMAT_JSON);
    EXPECT_FALSE(result.status.ok());
    EXPECT_TRUE(result.bytes.empty());
    return result.status;
  }

  static Fixture* dhis2_242_;
  // The 2.43-shaped database, created by the first test that asks for it (ctest
  // runs each test in its own process).
  static const Fixture* Dhis2_243() {
    if (dhis2_243_ == nullptr) dhis2_243_ = new Fixture("_iso", kIsoColumnSql);
    return dhis2_243_;
  }

  static Fixture* dhis2_243_;
};

Fixture* ParityTest::dhis2_242_ = nullptr;
Fixture* ParityTest::dhis2_243_ = nullptr;

using Ints = std::vector<int>;

// ---- filters ---------------------------------------------------------------

TEST_F(ParityTest, EverythingExceptDeletedValues) {
  EXPECT_EQ(Values(Everything()), (Ints{1, 2, 3, 4, 5, 6, 7, 9, 10}));
}

TEST_F(ParityTest, IncludeDeletedAddsDeletedValues) {
  ExportRequest query = Everything();
  query.set_include_deleted(true);
  EXPECT_EQ(Values(query), (Ints{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
}

TEST_F(ParityTest, DataSetSelectsItsElements) {
  ExportRequest query = Everything();
  query.clear_data_set();
  query.clear_data_element_group();
  query.add_data_set("dsMonthly01");
  EXPECT_EQ(Values(query), (Ints{1, 2, 5, 6, 7, 10}));
}

TEST_F(ParityTest, DataElementGroupIsAUnionWithDataElements) {
  // DHIS2 2.42 would export only the group's members (3, 4, 9).
  ExportRequest query = Everything();
  query.clear_data_set();
  query.add_data_element("deAlpha0001");
  EXPECT_EQ(Values(query), (Ints{1, 3, 4, 5, 6, 7, 9, 10}));
  query.clear_data_element();
  EXPECT_EQ(Values(query), (Ints{3, 4, 9}));
}

TEST_F(ParityTest, PeriodsSelectExactlyThosePeriods) {
  ExportRequest query = Everything();
  query.clear_start_date();
  query.clear_end_date();
  query.add_period("2024Q1");
  query.add_period("2024-02");
  EXPECT_EQ(Values(query), (Ints{4, 5, 6, 7, 9}));
}

TEST_F(ParityTest, StartAndEndDatesSelectPeriodsInside) {
  ExportRequest query = Everything();
  query.set_end_date("2024-02-29");  // 2024Q1 ends after: not inside
  EXPECT_EQ(Values(query), (Ints{1, 2, 3, 4, 5, 6, 7, 10}));
}

TEST_F(ParityTest, OrgUnitWithoutChildrenIsThatUnitOnly) {
  ExportRequest query = Everything();
  query.set_children(false);
  EXPECT_EQ(Values(query), Ints{10});
}

TEST_F(ParityTest, OrgUnitGroupsExportEachValueOnce) {
  // ouClinA0001 is in both groups; DHIS2's left join would repeat its values.
  ExportRequest query = Everything();
  query.clear_org_unit();
  query.set_children(false);
  query.add_org_unit_group("ougGroup001");
  query.add_org_unit_group("ougGroup002");
  EXPECT_EQ(Values(query), (Ints{1, 2, 3, 5, 6, 7, 9}));
}

TEST_F(ParityTest, OrgUnitGroupsAddToOrgUnits) {
  ExportRequest query = Everything();
  query.clear_org_unit();
  query.set_children(false);
  query.add_org_unit("ouClinC0003");
  query.add_org_unit_group("ougGroup002");
  EXPECT_EQ(Values(query), (Ints{1, 2, 4, 9}));
}

TEST_F(ParityTest, AttributeOptionCombosFilter) {
  ExportRequest query = Everything();
  query.add_attribute_option_combo("aocAP1x0022");
  query.add_attribute_option_combo("aocAP2x0024");
  EXPECT_EQ(Values(query), (Ints{5, 7}));
  query.clear_attribute_option_combo();
  query.set_input_id_scheme("CODE");
  query.clear_data_set();
  query.clear_data_element_group();
  query.clear_org_unit();
  query.add_data_set("DS_MONTHLY");
  query.add_org_unit("OU_ROOT");
  query.add_attribute_option_combo("AOC_AP1");
  EXPECT_EQ(Values(query), Ints{5});
}

TEST_F(ParityTest, AttributeComboAndOptionsNameOneOptionCombo) {
  ExportRequest query = Everything();
  query.set_attribute_combo("ccFunding01");
  query.add_attribute_options("coProject01");
  query.add_attribute_options("coPartnerB1");
  EXPECT_EQ(Values(query), Ints{6});
  query.clear_attribute_options();
  query.add_attribute_options("coPartnerA1");
  query.add_attribute_options("coProject02");
  EXPECT_EQ(Values(query), Ints{7});
}

TEST_F(ParityTest, AttributeComboErrors) {
  ExportRequest query = Everything();
  query.set_attribute_combo("ccFunding01");
  query.add_attribute_options("coPartnerA1");  // no combo of Partner A alone
  grpc::Status status = Error(query);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(),
            "E2041: Attribute option combo does not exist for given category combo and "
            "category options");

  query.set_attribute_combo("ccMissing01");
  status = Error(query);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "attribute_combo: \"ccMissing01\" does not exist");

  query.set_attribute_combo("ccFunding01");
  query.add_attribute_options("coMissing01");
  status = Error(query);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "attribute_options: \"coMissing01\" does not exist");

  query.clear_attribute_options();
  status = Error(query);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "E2040: Both category combination and category options must be specified");
}

TEST_F(ParityTest, LastUpdatedAloneSpansEveryPeriod) {
  ExportRequest query = Everything();
  query.clear_start_date();
  query.clear_end_date();
  query.set_last_updated("2024-03-01T10:00:00.000Z");
  EXPECT_EQ(Values(query), (Ints{2, 3, 4, 5, 6, 7, 9}));
  query.set_last_updated("2024-03-01T11:00:00+01:00");  // the same instant
  EXPECT_EQ(Values(query), (Ints{2, 3, 4, 5, 6, 7, 9}));
  query.set_last_updated("2024-03-15");
  EXPECT_EQ(Values(query), (Ints{2, 3, 9}));
  query.set_last_updated("2024-03-15T12:30:00.500");
  EXPECT_EQ(Values(query), (Ints{2, 3, 9}));
  query.set_last_updated("2024-03-15T12:30:00.501");
  EXPECT_EQ(Values(query), (Ints{3, 9}));
}

TEST_F(ParityTest, LastUpdatedCombinesWithPeriods) {
  ExportRequest query = Everything();
  query.set_last_updated("2024-03-01T10:00:00Z");
  query.clear_start_date();
  query.clear_end_date();
  query.add_period("202401");
  EXPECT_EQ(Values(query), (Ints{2, 3}));
}

TEST_F(ParityTest, LastUpdatedDurationCountsBackFromNow) {
  ExportRequest query = Everything();
  query.clear_start_date();
  query.clear_end_date();
  query.set_last_updated_duration("1d");  // only value 9 is updated in the future
  EXPECT_EQ(Values(query), Ints{9});
  query.set_last_updated_duration("36500000h");  // about 4,000 years: everything
  EXPECT_EQ(Values(query), (Ints{1, 2, 3, 4, 5, 6, 7, 9, 10}));
  query.set_last_updated_duration("99999999999999999d");  // beyond int64 microseconds
  EXPECT_EQ(Values(query), (Ints{1, 2, 3, 4, 5, 6, 7, 9, 10}));
}

TEST_F(ParityTest, CountAppliesTheSameFilters) {
  ExportRequest query = Everything();
  query.clear_org_unit();
  query.set_children(false);
  query.add_org_unit_group("ougGroup001");
  query.add_org_unit_group("ougGroup002");
  EXPECT_EQ(dhis2_242_->Count(query), 7);  // 1, 2, 3, 5, 6, 7, 9: each once
  query.add_attribute_option_combo("aocAP1x0022");
  EXPECT_EQ(dhis2_242_->Count(query), 1);  // 5

  query = Everything();
  query.clear_start_date();
  query.clear_end_date();
  query.set_last_updated("2024-03-15");
  EXPECT_EQ(dhis2_242_->Count(query), 3);  // 2, 3, 9
  query.set_include_deleted(true);
  query.set_last_updated("2024-03-02T10:00:00Z");
  EXPECT_EQ(dhis2_242_->Count(query), 4);  // 2, 3, 8, 9
}

TEST_F(ParityTest, LimitCutsTheExport) {
  ExportRequest query = Everything();
  query.set_limit(3);
  EXPECT_EQ(Values(query).size(), 3u);
  query.set_limit(0);
  EXPECT_TRUE(Values(query).empty());
}

// ---- input id schemes ------------------------------------------------------

TEST_F(ParityTest, InputIdSchemeCodeAndName) {
  ExportRequest query;
  query.set_input_id_scheme("code");  // case-insensitive, as IdScheme.from
  query.add_data_element("DE_D");
  query.add_org_unit("OU_C");
  query.add_period("202402");
  EXPECT_EQ(Values(query), Ints{4});

  query.set_input_id_scheme("NAME");
  query.clear_data_element();
  query.clear_org_unit();
  query.add_data_element("Delta");
  query.add_org_unit("Clinic C");
  EXPECT_EQ(Values(query), Ints{4});
}

TEST_F(ParityTest, SpecificInputSchemeOverridesInputIdScheme) {
  ExportRequest query;
  query.set_input_id_scheme("CODE");
  query.set_input_data_set_id_scheme("UID");
  query.set_input_org_unit_id_scheme("NAME");
  query.set_input_data_element_id_scheme("ATTRIBUTE:AttrExtId01");
  query.set_input_data_element_group_id_scheme("UID");
  query.add_data_set("dsOther0002");
  query.add_data_element("EXT-A");
  query.add_data_element_group("degGroup001");
  query.add_org_unit("Root");
  query.add_org_unit_group("OUG_1");  // org unit groups follow input_id_scheme
  query.add_period("202401");
  EXPECT_EQ(Values(query), (Ints{1, 3, 10}));
}

TEST_F(ParityTest, AttributeInputSchemeReadsAttributeValues) {
  ExportRequest query;
  query.set_input_id_scheme("attribute:AttrExtId01");
  query.add_data_element("EXT-C");
  query.add_org_unit_group("EXT-OUG-1");
  query.add_period("202401");
  EXPECT_EQ(Values(query), Ints{3});
}

TEST_F(ParityTest, UnknownIdentifiersAreNotFound) {
  ExportRequest query = Everything();
  query.add_data_set("dsMissing01");
  grpc::Status status = Error(query);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "data_set: \"dsMissing01\" does not exist");

  query = Everything();
  query.set_input_data_element_id_scheme("CODE");
  query.add_data_element("DE_MISSING");
  status = Error(query);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "data_element: \"DE_MISSING\" does not exist (id scheme CODE)");

  query = Everything();
  query.add_org_unit_group("ougMissing1");
  query.set_children(false);
  status = Error(query);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "org_unit_group: \"ougMissing1\" does not exist");

  query = Everything();
  query.add_attribute_option_combo("aocMissing1");
  status = Error(query);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "attribute_option_combo: \"aocMissing1\" does not exist");

  query = Everything();
  query.add_data_element_group("degMissing1");
  status = Error(query);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "data_element_group: \"degMissing1\" does not exist");
}

TEST_F(ParityTest, AmbiguousNamesAreInvalid) {
  ExportRequest query = Everything();
  query.clear_org_unit();
  query.set_input_org_unit_id_scheme("NAME");
  query.add_org_unit("Clinic");  // ouClinA0001 and ouClinB0002
  grpc::Status status = Error(query);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "org_unit: \"Clinic\" names 2 organisation units (id scheme NAME); use an id scheme "
            "that is unique, such as UID");
}

TEST_F(ParityTest, UidFormatIsCheckedOnlyUnderTheUidScheme) {
  ExportRequest query = Everything();
  query.add_data_element("DE_A");
  grpc::Status status = Error(query);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "data_element: \"DE_A\" is not a valid UID (11 characters, a letter then letters or "
            "digits)");
  query.set_input_data_element_id_scheme("CODE");
  EXPECT_EQ(Values(query), (Ints{1, 2, 3, 4, 5, 6, 7, 9, 10}));

  // The org unit scheme does not apply to org unit groups.
  query = Everything();
  query.set_children(false);
  query.set_input_org_unit_id_scheme("CODE");
  query.add_org_unit_group("OUG_2");
  status = Error(query);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "org_unit_group: \"OUG_2\" is not a valid UID (11 characters, a letter then letters "
            "or digits)");
}

TEST_F(ParityTest, UnknownIdSchemesNameTheirField) {
  const char* kRule = " is not a valid id scheme (UID, CODE, NAME or ATTRIBUTE:<attribute uid>)";
  ExportRequest query = Everything();
  query.set_id_scheme("ID");
  grpc::Status status = Error(query);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), std::string("id_scheme: \"ID\"") + kRule);

  query = Everything();
  query.set_input_org_unit_id_scheme("ATTRIBUTE:short");
  status = Error(query);
  EXPECT_EQ(status.error_message(),
            std::string("input_org_unit_id_scheme: \"ATTRIBUTE:short\"") + kRule);

  query = Everything();
  query.set_category_option_combo_id_scheme("UUID");
  status = Error(query);
  EXPECT_EQ(status.error_message(),
            std::string("category_option_combo_id_scheme: \"UUID\"") + kRule);
}

// ---- output id schemes -----------------------------------------------------

TEST_F(ParityTest, CodeSchemeWritesNullForMissingCodes) {
  ExportRequest query;
  query.add_data_element("deCharl0003");  // no code
  query.add_org_unit("ouClinB0002");      // no code
  query.add_period("202401");
  query.set_id_scheme("CODE");
  EXPECT_EQ(Json(query),
            "{\"dataValues\":[{\"dataElement\":null,\"period\":\"202401\",\"orgUnit\":null,"
            "\"categoryOptionCombo\":\"default\",\"attributeOptionCombo\":\"default\","
            "\"value\":\"3\",\"storedBy\":null,\"created\":\"2024-02-01T10:00:00.000+0000\","
            "\"lastUpdated\":\"2024-04-01T00:00:00.000+0000\",\"comment\":null,"
            "\"followup\":false}]}");
  // javacsv writes an empty first column as "".
  EXPECT_EQ(Csv(query), std::string(kCsvHeader) +
                            "\"\",202401,,default,default,3,,2024-04-01T00:00:00.000+0000,,false,"
                            "null\n");
}

TEST_F(ParityTest, XmlOmitsMissingCodes) {
  // XmlDataValueSetWriter's writeAttribute skips null values; followUp is always written,
  // deleted only when true.
  ExportRequest query;
  query.add_data_element("deCharl0003");  // no code
  query.add_org_unit("ouClinB0002");      // no code
  query.add_period("202401");
  query.set_id_scheme("CODE");
  EXPECT_EQ(Xml(query),
            "<?xml version='1.0' encoding='UTF-8'?>"
            "<dataValueSet xmlns=\"http://dhis2.org/schema/dxf/2.0\">"
            "<dataValue period=\"202401\" categoryOptionCombo=\"default\" "
            "attributeOptionCombo=\"default\" value=\"3\" created=\"2024-02-01T10:00:00.000+0000\" "
            "lastUpdated=\"2024-04-01T00:00:00.000+0000\" followUp=\"false\"/></dataValueSet>");
}

TEST_F(ParityTest, XmlMarksDeletedValues) {
  ExportRequest query;
  query.add_data_element("deBravo0002");
  query.add_org_unit("ouClinA0001");
  query.add_period("202402");
  query.set_include_deleted(true);
  query.set_id_scheme("NAME");
  const std::string xml = Xml(query);
  EXPECT_NE(xml.find("<dataValue dataElement=\"Bravo\" period=\"202402\" orgUnit=\"Clinic\" "),
            std::string::npos)
      << xml;
  EXPECT_TRUE(xml.ends_with(" followUp=\"false\" deleted=\"true\"/></dataValueSet>")) << xml;
}

TEST_F(ParityTest, NameScheme) {
  ExportRequest query;
  query.add_data_element("deAlpha0001");
  query.add_org_unit("ouClinB0002");
  query.add_period("202402");
  query.set_id_scheme("NAME");
  EXPECT_EQ(CsvRows(query), (std::vector<std::string>{
                                "Alpha,202402,Clinic,default,\"Partner A, Project 1\",5,admin,"
                                "2024-03-01T10:00:00.000+0000,,false,null",
                                "Alpha,202402,Clinic,default,\"Partner A, Project 2\",7,admin,"
                                "2024-03-01T10:00:00.000+0000,,false,null",
                                "Alpha,202402,Clinic,default,\"Partner B, Project 1\",6,admin,"
                                "2024-03-01T10:00:00.000+0000,,false,null"}));
}

TEST_F(ParityTest, AttributeSchemeWritesAttributeValuesOrNull) {
  ExportRequest query;
  query.add_data_element("deAlpha0001");
  query.add_org_unit("ouClinB0002");
  query.add_period("202402");
  query.set_id_scheme("ATTRIBUTE:AttrExtId01");
  EXPECT_EQ(CsvRows(query),
            (std::vector<std::string>{
                "EXT-A,202402,,EXT-DEFAULT,,6,admin,2024-03-01T10:00:00.000+0000,,false,null",
                "EXT-A,202402,,EXT-DEFAULT,,7,admin,2024-03-01T10:00:00.000+0000,,false,null",
                "EXT-A,202402,,EXT-DEFAULT,EXT-AP1,5,admin,2024-03-01T10:00:00.000+0000,,false,"
                "null"}));
}

TEST_F(ParityTest, SpecificOutputSchemesOverrideIdScheme) {
  ExportRequest query;
  query.add_data_element("deAlpha0001");
  query.add_org_unit("ouRoot00001");
  query.add_period("202401");
  query.set_id_scheme("CODE");
  query.set_data_element_id_scheme("NAME");
  query.set_category_option_combo_id_scheme("UID");
  query.set_attribute_option_combo_id_scheme("ATTRIBUTE:AttrExtId01");
  EXPECT_EQ(Csv(query), std::string(kCsvHeader) +
                            "Alpha,202401,OU_ROOT,cocOther025,EXT-DEFAULT,10,admin,"
                            "2024-02-01T10:00:00.000+0000,,false,null\n");
}

// ---- the single data value set header --------------------------------------

TEST_F(ParityTest, HeaderUsesDataSetAndOrgUnitSchemes) {
  ExportRequest query;
  query.add_data_set("dsMonthly01");
  query.add_org_unit("ouClinA0001");
  query.add_period("202401");
  const std::string values_key = ",\"dataValues\":[";
  std::string json = Json(query);
  EXPECT_EQ(json.substr(0, json.find(values_key)),
            "{\"dataSet\":\"dsMonthly01\",\"completeDate\":\"2024-02-05T08:00:00.000+0000\","
            "\"period\":\"202401\",\"orgUnit\":\"ouClinA0001\"");

  query.set_data_set_id_scheme("CODE");
  query.set_org_unit_id_scheme("NAME");
  json = Json(query);
  EXPECT_EQ(json.substr(0, json.find(values_key)),
            "{\"dataSet\":\"DS_MONTHLY\",\"completeDate\":\"2024-02-05T08:00:00.000+0000\","
            "\"period\":\"202401\",\"orgUnit\":\"Clinic\"");

  query.clear_data_set_id_scheme();
  query.clear_org_unit_id_scheme();
  query.set_id_scheme("ATTRIBUTE:AttrExtId01");
  json = Json(query);
  EXPECT_EQ(json.substr(0, json.find(values_key)),
            "{\"dataSet\":\"EXT-DS\",\"completeDate\":\"2024-02-05T08:00:00.000+0000\","
            "\"period\":\"202401\",\"orgUnit\":\"EXT-OU-A\"");
}

TEST_F(ParityTest, HeaderWritesNullsForMissingIdentifiersAndRegistration) {
  ExportRequest query;
  query.add_data_set("dsOther0002");  // no code, no registration
  query.add_org_unit("ouClinB0002");  // no code
  query.add_period("202401");
  query.set_id_scheme("CODE");
  EXPECT_EQ(Json(query),
            "{\"dataSet\":null,\"completeDate\":null,\"period\":\"202401\",\"orgUnit\":null,"
            "\"dataValues\":[{\"dataElement\":null,\"period\":\"202401\",\"orgUnit\":null,"
            "\"categoryOptionCombo\":\"default\",\"attributeOptionCombo\":\"default\","
            "\"value\":\"3\",\"storedBy\":null,\"created\":\"2024-02-01T10:00:00.000+0000\","
            "\"lastUpdated\":\"2024-04-01T00:00:00.000+0000\",\"comment\":null,"
            "\"followup\":false}]}");
}

TEST_F(ParityTest, XmlHeaderIsAttributesOfTheRootWithoutNulls) {
  ExportRequest query;
  query.add_data_set("dsMonthly01");
  query.add_org_unit("ouClinA0001");
  query.add_period("202401");
  query.set_data_set_id_scheme("CODE");
  query.set_org_unit_id_scheme("NAME");
  std::string xml = Xml(query);
  EXPECT_EQ(xml.substr(0, xml.find("><dataValue ")),
            "<?xml version='1.0' encoding='UTF-8'?>"
            "<dataValueSet xmlns=\"http://dhis2.org/schema/dxf/2.0\" dataSet=\"DS_MONTHLY\" "
            "completeDate=\"2024-02-05T08:00:00.000+0000\" period=\"202401\" orgUnit=\"Clinic\"");

  query.clear_data_set();
  query.clear_data_set_id_scheme();
  query.clear_org_unit_id_scheme();
  query.add_data_set("dsOther0002");  // no code, no registration
  query.clear_org_unit();
  query.add_org_unit("ouClinB0002");  // no code
  query.set_id_scheme("CODE");
  xml = Xml(query);
  EXPECT_EQ(xml.substr(0, xml.find("><dataValue ")),
            "<?xml version='1.0' encoding='UTF-8'?>"
            "<dataValueSet xmlns=\"http://dhis2.org/schema/dxf/2.0\" period=\"202401\"");
}

TEST_F(ParityTest, NoHeaderWithADataElementGroup) {
  ExportRequest query;
  query.add_data_set("dsOther0002");
  query.add_data_element_group("degGroup001");
  query.add_org_unit("ouClinB0002");
  query.add_period("202401");
  EXPECT_EQ(Json(query).substr(0, 15), "{\"dataValues\":[");
}

// ---- validation, through the server ----------------------------------------

TEST_F(ParityTest, EveryDhis2RuleWithItsCodeAndMessage) {
  struct Case {
    const char* name;
    ExportRequest query;
    const char* message;
  };
  std::vector<Case> cases;
  ExportRequest q = Everything();
  q.clear_data_set();
  q.clear_data_element_group();
  cases.push_back({"E2001", q,
                   "E2001: At least one data element, data set or data element group must be "
                   "specified"});
  q = Everything();
  q.clear_start_date();
  q.clear_end_date();
  cases.push_back({"E2002", q,
                   "E2002: At least one period, start/end dates, last updated or last updated "
                   "duration must be specified"});
  q = Everything();
  q.add_period("202401");
  cases.push_back({"E2003", q, "E2003: Both periods and start/end date cannot be specified"});
  q = Everything();
  q.set_start_date("2025-01-01");
  cases.push_back({"E2004", q, "E2004: Start date must be before end date"});
  q = Everything();
  q.set_last_updated_duration("2w");
  cases.push_back({"E2005", q, "E2005: Duration is not valid: `2w`"});
  q = Everything();
  q.clear_org_unit();
  q.set_children(false);
  cases.push_back({"E2006", q,
                   "E2006: At least one organisation unit or organisation unit group must be "
                   "specified"});
  q = Everything();
  q.add_org_unit_group("ougGroup001");
  cases.push_back({"E2007", q,
                   "E2007: Organisation unit children cannot be included for organisation unit "
                   "groups"});
  q = Everything();
  q.set_limit(-1000);
  cases.push_back({"E2009", q, "E2009: Limit cannot be less than zero: `-1,000`"});
  for (const Case& c : cases) {
    grpc::Status status = Error(c.query);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.name;
    EXPECT_EQ(status.error_message(), c.message) << c.name;
  }
}

TEST_F(ParityTest, MalformedLastUpdatedNamesTheField) {
  ExportRequest query = Everything();
  query.set_last_updated("2024-03-01T25:00:00");
  grpc::Status status = Error(query);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "last_updated: \"2024-03-01T25:00:00\" is not a valid date (yyyy-MM-dd)");
}

// ---- period.iso (DHIS2 2.43) -----------------------------------------------

TEST_F(ParityTest, ReadsPeriodIsoColumnWhenPresent) {
  ExportRequest query;
  query.add_data_element("deAlpha0001");
  query.add_org_unit("ouClinA0001");
  query.set_start_date("2024-01-05");
  query.set_end_date("2024-01-11");
  // A 2.43 database answers as 2.43, whose CSV writes deleted as false (2.42: null).
  EXPECT_EQ(
      CsvRows(query, Dhis2_243()),
      std::vector<std::string>{"deAlpha0001,2024FriW1,ouClinA0001,HllvX50cXC0,HllvX50cXC0,11,admin,"
                               "2024-01-12T10:00:00.000+0000,,false,false"});
  // Ordinary periods read from the column too, and the rest is as in 2.42.
  EXPECT_EQ(Values(Everything(), Dhis2_243()), (Ints{1, 2, 3, 4, 5, 6, 7, 9, 10, 11}));
  EXPECT_EQ(Values(Everything()), (Ints{1, 2, 3, 4, 5, 6, 7, 9, 10}));
}

TEST_F(ParityTest, DetectsPeriodIsoOncePerConnection) {
  absl::StatusOr<dhis2::ExportParams> params = dhis2::ValidateExportRequest(Everything());
  ASSERT_TRUE(params.ok()) << params.status();
  for (const auto& [fixture, has_iso] : {std::pair<const Fixture*, bool>{dhis2_242_, false},
                                         std::pair<const Fixture*, bool>{Dhis2_243(), true}}) {
    absl::StatusOr<std::unique_ptr<db::DatabaseConnection>> conn =
        db::DatabaseConnection::Connect(fixture->conninfo());
    ASSERT_TRUE(conn.ok()) << conn.status();
    EXPECT_EQ((*conn)->dhis2_schema().period_iso, has_iso);
    pqxx::read_transaction tx(**conn);
    absl::StatusOr<db::ExportScope> scope =
        db::ResolveExportScope(tx, (*conn)->dhis2_schema(), *params,
                               /*reader=*/nullptr);
    ASSERT_TRUE(scope.ok()) << scope.status();
  }
  // The connection's answer is what is read: told that 2.43's database has no period.iso, the
  // export computes ids and cannot name WeeklyFriday.
  absl::StatusOr<std::unique_ptr<db::DatabaseConnection>> conn =
      db::DatabaseConnection::Connect(Dhis2_243()->conninfo());
  ASSERT_TRUE(conn.ok()) << conn.status();
  db::Dhis2Schema without_iso = (*conn)->dhis2_schema();
  without_iso.period_iso = false;
  pqxx::read_transaction tx(**conn);
  absl::StatusOr<db::ExportScope> scope = db::ResolveExportScope(tx, without_iso, *params,
                                                                 /*reader=*/nullptr);
  EXPECT_EQ(scope.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(scope.status().message(),
            "period 604 has period type \"WeeklyFriday\", which has no ISO identifier in DHIS2 "
            "2.42");
}

}  // namespace
}  // namespace dvexport
