// ADX as DHIS2 2.43 exports it (DataExportPipeline.exportAsXmlGroups, DefaultDataExportService.
// exportInGroups), on the demo in 2.43's schema (DVEXPORT_TEST_PG_243): the expected documents
// are built here from SQL and 2.43's rules (each data set in request order with its members only,
// groups by period, org unit and attribute option combo in the order pe.startdate, pe.enddate,
// ou.path, aoc.uid, no restriction to the data set's attribute combo, categories unfolded by
// code, the default combo's too, limit and offset for each data set), then compared byte for
// byte. Within a group 2.43's order is unspecified; dvexport's is data element id, then option
// combo id, which the expected documents follow.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <pqxx/connection>
#include <pqxx/nontransaction>
#include <pqxx/result>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "service/server/export_server.h"

namespace dvexport {
namespace {

constexpr char kPop[] = "IF4YaBzxNHa";          // DS_POP, default combo
constexpr char kPartner[] = "QfF9ZANatcj";      // DS_PARTNER, Funding Partner
constexpr char kChildHealth[] = "JurnHCkmDCn";  // DS_CHILD_HEALTH: Qu078Halii1 has no code
constexpr char kEmpty[] = "<adx xmlns=\"urn:ihe:qrph:adx:2015\"/>";

std::string Conninfo243() {
  const char* value = std::getenv("DVEXPORT_TEST_PG_243");
  return value == nullptr ? "" : value;
}

// What the expected document of one data set is built from.
struct Expectation {
  std::string data_set;
  std::optional<int> limit = std::nullopt, offset = std::nullopt;
  bool exclude_default_aoc = false;
};

// The rows of one data set's values under O6uvpzGd5pu and its descendants, November 2023,
// 2024Q1 and 2024, in 2.43's ADX order: data set code, start date, period type, org unit code, the
// attribute option combo's categories (empty for the default one when excluded), data element
// code, the option combo's categories, value, value type, then the group key's ids.
pqxx::result ValuesOf(pqxx::transaction_base& tx, const Expectation& expectation) {
  return tx.exec_params(
      absl::StrCat(
          "WITH cats AS (SELECT coc.categoryoptioncomboid AS id, string_agg(' ' || c.code || "
          "'=\"' || co.code || '\"', '' ORDER BY x.categorycomboid, cc.sort_order) AS attrs "
          "FROM categoryoptioncombo coc "
          "JOIN categorycombos_optioncombos x USING (categoryoptioncomboid) "
          "JOIN categorycombos_categories cc ON cc.categorycomboid = x.categorycomboid "
          "JOIN category c ON c.categoryid = cc.categoryid "
          "JOIN categoryoptioncombos_categoryoptions y USING (categoryoptioncomboid) "
          "JOIN categoryoption co ON co.categoryoptionid = y.categoryoptionid "
          "JOIN categories_categoryoptions z ON z.categoryoptionid = co.categoryoptionid "
          "AND z.categoryid = c.categoryid GROUP BY 1) "
          "SELECT ds.code, to_char(pe.startdate, 'YYYY-MM-DD'), pt.name, ou.code, "
          "CASE WHEN $2 AND aoc.uid = 'HllvX50cXC0' THEN '' ELSE ac.attrs END, de.code, "
          "cc.attrs, dv.value, de.valuetype, dv.periodid, dv.sourceid, aoc.uid "
          "FROM datavalue dv JOIN period pe USING (periodid) "
          "JOIN periodtype pt USING (periodtypeid) "
          "JOIN organisationunit ou ON ou.organisationunitid = dv.sourceid "
          "JOIN categoryoptioncombo aoc "
          "ON aoc.categoryoptioncomboid = dv.attributeoptioncomboid "
          "JOIN dataelement de USING (dataelementid) "
          "JOIN datasetelement dse ON dse.dataelementid = dv.dataelementid "
          "JOIN dataset ds ON ds.datasetid = dse.datasetid AND ds.uid = $1 "
          "JOIN cats ac ON ac.id = dv.attributeoptioncomboid "
          "JOIN cats cc ON cc.id = dv.categoryoptioncomboid "
          "WHERE pe.iso IN ('202311', '2024Q1', '2024') AND NOT dv.deleted "
          "AND ou.path LIKE '/ImspTQPwCqd/O6uvpzGd5pu%' "
          "ORDER BY pe.startdate, pe.enddate, ou.path, aoc.uid, dv.periodid, dv.sourceid, "
          "dv.attributeoptioncomboid, dv.dataelementid, dv.categoryoptioncomboid",
          expectation.limit ? absl::StrCat(" LIMIT ", *expectation.limit) : "",
          expectation.offset ? absl::StrCat(" OFFSET ", *expectation.offset) : ""),
      expectation.data_set, expectation.exclude_default_aoc);
}

// 2.43's ADX document of "data_sets" (in this order), from SQL.
std::string ExpectedDocument(const std::vector<Expectation>& data_sets) {
  static const std::map<std::string, std::string> kDurations = {
      {"Monthly", "P1M"}, {"Quarterly", "P3M"}, {"Yearly", "P1Y"}};
  static const std::vector<std::string> kNumeric = {
      "INTEGER", "INTEGER_POSITIVE", "INTEGER_NEGATIVE", "INTEGER_ZERO_OR_POSITIVE",
      "NUMBER",  "UNIT_INTERVAL",    "PERCENTAGE"};
  pqxx::connection conn(Conninfo243());
  pqxx::nontransaction tx(conn);
  std::string document = "<adx xmlns=\"urn:ihe:qrph:adx:2015\">";
  bool any = false;
  for (const Expectation& expectation : data_sets) {
    std::string key;
    for (const pqxx::row& r : ValuesOf(tx, expectation)) {
      const std::string value = r[7].c_str();
      EXPECT_EQ(value.find_first_of("&<>\"'\t\n\r"), std::string::npos) << "escape " << value;
      const std::string group_key =
          absl::StrCat(r[9].c_str(), "/", r[10].c_str(), "/", r[11].c_str());
      if (group_key != key) {
        if (!key.empty()) document += "</group>";
        key = group_key;
        absl::StrAppend(&document, "<group dataSet=\"", r[0].c_str(), "\" period=\"", r[1].c_str(),
                        "/", kDurations.at(r[2].c_str()), "\" orgUnit=\"", r[3].c_str(), "\"",
                        r[4].c_str(), ">");
      }
      absl::StrAppend(&document, "<dataValue dataElement=\"", r[5].c_str(), "\"", r[6].c_str());
      if (std::find(kNumeric.begin(), kNumeric.end(), r[8].c_str()) != kNumeric.end()) {
        absl::StrAppend(&document, " value=\"", value, "\"/>");
      } else {
        absl::StrAppend(&document, " value=\"0\"><annotation>", value, "</annotation></dataValue>");
      }
      any = true;
    }
    if (!key.empty()) document += "</group>";
  }
  return any ? document + "</adx>" : kEmpty;
}

class Adx243Test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (Conninfo243().empty()) return;
    server::ServerOptions options;
    options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
    options.listen = "127.0.0.1:0";
    options.conninfo = Conninfo243();
    auto started = server::ExportServer::Start(options);
    EXPECT_TRUE(started.ok()) << started.status();
    if (!started.ok()) return;
    server_ = started->release();
    stub_ = v1::DataValueExport::NewStub(
                grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                    grpc::InsecureChannelCredentials()))
                .release();
  }
  static void TearDownTestSuite() {
    delete stub_;
    delete server_;
  }

  void SetUp() override {
    ASSERT_FALSE(Conninfo243().empty()) << "DVEXPORT_TEST_PG_243 is not set (scripts/test sets it)";
    ASSERT_NE(stub_, nullptr);
  }

  // An ADX export of "data_sets" under O6uvpzGd5pu with its children, for the periods of
  // ExpectedDocument.
  static v1::ExportFileRequest Request(const std::vector<std::string>& data_sets) {
    v1::ExportFileRequest request;
    request.set_format(v1::FORMAT_ADX);
    for (const std::string& set : data_sets) request.mutable_query()->add_data_set(set);
    request.mutable_query()->add_org_unit("O6uvpzGd5pu");
    request.mutable_query()->set_children(true);
    for (const char* period : {"202311", "2024Q1", "2024"}) {
      request.mutable_query()->add_period(period);
    }
    return request;
  }

  // The file, or the call's status; no byte may precede an error.
  static absl::StatusOr<std::string> Export(const v1::ExportFileRequest& request) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    auto reader = stub_->ExportFile(&context, request);
    v1::FileChunk chunk;
    std::string bytes;
    while (reader->Read(&chunk)) bytes += chunk.data();
    const grpc::Status status = reader->Finish();
    if (status.ok()) return bytes;
    EXPECT_EQ(bytes, "") << status.error_message();
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
  }

  static server::ExportServer* server_;
  static v1::DataValueExport::Stub* stub_;
};

server::ExportServer* Adx243Test::server_ = nullptr;
v1::DataValueExport::Stub* Adx243Test::stub_ = nullptr;

// Request order, not the data sets' ids; DS_PARTNER's groups include the default attribute
// option combo of its element shared with Child Health (2.42 left them out), and option combos
// without a code (Female, <5y) are no refusal: ADX writes their categories.
TEST_F(Adx243Test, DataSetsInRequestOrderGroupedByPeriodOrgUnitAndAttributeOptionCombo) {
  const std::string want = ExpectedDocument({{kPop}, {kPartner}});
  EXPECT_NE(want.find("<group dataSet=\"DS_PARTNER\""), std::string::npos);
  EXPECT_NE(want.find("FUNDING_PARTNER=\"CO_PARTNER_B\">"), std::string::npos);
  EXPECT_NE(want.find("orgUnit=\"OU_110016\" default=\"default\">"), std::string::npos);
  absl::StatusOr<std::string> got = Export(Request({kPop, kPartner}));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, want);
  got = Export(Request({kPartner, kPop}));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, ExpectedDocument({{kPartner}, {kPop}}));
}

TEST_F(Adx243Test, LimitAndOffsetApplyToEachDataSet) {
  v1::ExportFileRequest request = Request({kPartner, kPop});
  request.mutable_query()->set_limit(7);
  request.mutable_query()->set_offset(3);
  absl::StatusOr<std::string> got = Export(request);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, ExpectedDocument({{kPartner, 7, 3}, {kPop, 7, 3}}));
  request.mutable_query()->set_limit(0);
  got = Export(request);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, kEmpty);
}

// inputUseCodeFallback is true for ADX: a code names its data set without an input scheme.
TEST_F(Adx243Test, DataSetByCodeWithoutAnInputScheme) {
  absl::StatusOr<std::string> got = Export(Request({"DS_PARTNER"}));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, ExpectedDocument({{kPartner}}));
}

TEST_F(Adx243Test, ExcludeDefaultAocLeavesItsGroupsWithoutCategories) {
  v1::ExportFileRequest request = Request({kPartner});
  request.mutable_query()->set_exclude_default_aoc(true);
  absl::StatusOr<std::string> got = Export(request);
  ASSERT_TRUE(got.ok()) << got.status();
  const std::string want = ExpectedDocument({{kPartner, std::nullopt, std::nullopt, true}});
  EXPECT_NE(want.find("orgUnit=\"OU_110016\"><dataValue"), std::string::npos);
  EXPECT_EQ(*got, want);
}

// Only data sets select content; data elements and groups are cleared, attributeCombo filters.
TEST_F(Adx243Test, RequestsThat242RefusesAreTaken) {
  v1::ExportFileRequest request = Request({});
  request.mutable_query()->add_data_element("Qu078Halii1");  // no code: cleared, no E8201
  absl::StatusOr<std::string> got = Export(request);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, kEmpty);

  request = Request({kPartner});
  request.mutable_query()->add_data_element("Qu078Halii1");
  request.mutable_query()->add_data_element_group("oDkJh5Ddh7d");
  got = Export(request);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, ExpectedDocument({{kPartner}}));

  request = Request({kPartner});
  request.mutable_query()->set_attribute_combo("oMxOxAHrPBP");    // Funding Partner
  request.mutable_query()->add_attribute_options("PJ2NhUgijpD");  // Partner B
  got = Export(request);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_NE(got->find("FUNDING_PARTNER=\"CO_PARTNER_B\""), std::string::npos);
  EXPECT_EQ(got->find("default=\"default\">"), std::string::npos) << *got;
}

TEST_F(Adx243Test, DataElementWithoutCodeIsE8201BeforeAnyByte) {
  absl::StatusOr<std::string> got = Export(Request({kPop, kChildHealth}));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(got.status().message(),
            "E8201: Export as CODE not possible as the property is undefined for data "
            "element(s): `[Qu078Halii1]`");
}

TEST_F(Adx243Test, MissingIdentifiersInOtherSchemes) {
  v1::ExportFileRequest request = Request({kPop, kPartner});
  request.mutable_query()->set_data_set_id_scheme("ATTRIBUTE:AttrExtId01");
  absl::StatusOr<std::string> got = Export(request);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(got.status().message(),
            "E8200: Export as ATTR not possible as the property is undefined for data set: "
            "`IF4YaBzxNHa`");

  request = Request({kPop});
  request.mutable_query()->set_id_scheme("ATTRIBUTE:AttrExtId01");
  request.mutable_query()->set_data_set_id_scheme("UID");
  request.mutable_query()->set_data_element_id_scheme("UID");
  request.mutable_query()->set_org_unit_id_scheme("NAME");
  got = Export(request);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(got.status().message(),
            "E8204: Export as category ATTR and category options ATTR not possible as the "
            "property is undefined for at least one of them linked to category option combo(s): "
            "`ATTR`");
}

}  // namespace
}  // namespace dvexport
