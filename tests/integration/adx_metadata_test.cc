// ADX refusals that come from the database's metadata, with the messages DHIS2 gives or, where
// DHIS2 fails with a NullPointerException, messages that name the objects by UID. The metadata
// is written into a database of its own (tests/parity's fixture plus the rows below, created
// and dropped through DVEXPORT_TEST_PG_ADMIN), so that the demo database stays as it is.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "service/server/export_server.h"
#include "tests/parity/fixture_database.h"

namespace dvexport {
namespace {

// The fixture's attribute combo ccFunding01 (2) gets its two categories; Partner has no value of
// attribute AttrExtId01. aocEmpty026 joins the combo without any category option. A value of
// deCharl0003 (in dsOther0002, default combo) has the option combo aocAP1x0022, which is in none
// of that data set's combos.
constexpr char kExtraSql[] = R"sql(
INSERT INTO category (categoryid, uid, code, created, lastupdated, name, shortname,
                      datadimensiontype, datadimension, attributevalues) VALUES
  (701, 'caPartner01', 'PARTNER', '2020-01-01', '2020-01-01', 'Partner', 'Partner',
   'ATTRIBUTE', false, '{}'),
  (702, 'caProject01', 'PROJECT', '2020-01-01', '2020-01-01', 'Project', 'Project',
   'ATTRIBUTE', false, '{"AttrExtId01": {"value": "EXT-PROJECT"}}');
INSERT INTO categorycombos_categories (categorycomboid, sort_order, categoryid) VALUES
  (2, 1, 701), (2, 2, 702);
INSERT INTO categories_categoryoptions (categoryid, sort_order, categoryoptionid) VALUES
  (701, 1, 12), (701, 2, 13), (702, 1, 14), (702, 2, 15);
INSERT INTO categoryoptioncombo (categoryoptioncomboid, uid, code, created, lastupdated, name,
                                 ignoreapproval, attributevalues) VALUES
  (26, 'aocEmpty026', 'AOC_EMPTY', '2020-01-01', '2020-01-01', 'Nothing', false, '{}');
INSERT INTO categorycombos_optioncombos (categoryoptioncomboid, categorycomboid) VALUES (26, 2);
INSERT INTO datavalue (dataelementid, periodid, sourceid, categoryoptioncomboid,
                       attributeoptioncomboid, value, storedby, created, lastupdated, comment,
                       followup, deleted) VALUES
  (103, 601, 403, 22, 21, '11', 'admin', '2024-02-01 10:00:00', '2024-02-01 10:00:00', NULL,
   false, false);
)sql";

class AdxMetadataTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fixture_ = new testing::FixtureDatabase("_adx", kExtraSql);
    if (fixture_->reader_conninfo().empty()) return;
    server::ServerOptions options;
    options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
    options.listen = "127.0.0.1:0";
    options.conninfo = fixture_->reader_conninfo();
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
    delete fixture_;
  }

  void SetUp() override { ASSERT_NE(stub_, nullptr); }

  // An ADX export of "data_set" under the root with its children, January 2024.
  static v1::ExportFileRequest Request(const std::string& data_set) {
    v1::ExportFileRequest request;
    request.set_format(v1::FORMAT_ADX);
    request.mutable_query()->add_data_set(data_set);
    request.mutable_query()->add_org_unit("ouRoot00001");
    request.mutable_query()->set_children(true);
    request.mutable_query()->add_period("202401");
    return request;
  }

  // The call's status; no byte may precede the error.
  static grpc::Status Export(const v1::ExportFileRequest& request) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    auto reader = stub_->ExportFile(&context, request);
    v1::FileChunk chunk;
    std::string bytes;
    while (reader->Read(&chunk)) bytes += chunk.data();
    grpc::Status status = reader->Finish();
    if (!status.ok()) {
      EXPECT_EQ(bytes, "") << status.error_message();
    }
    return status;
  }

  static testing::FixtureDatabase* fixture_;
  static server::ExportServer* server_;
  static v1::DataValueExport::Stub* stub_;
};

testing::FixtureDatabase* AdxMetadataTest::fixture_ = nullptr;
server::ExportServer* AdxMetadataTest::server_ = nullptr;
v1::DataValueExport::Stub* AdxMetadataTest::stub_ = nullptr;

// DHIS2's IdScheme.name() includes the attribute: "ATTRIBUTE:<uid>", not "ATTRIBUTE".
TEST_F(AdxMetadataTest, MissingAttributeValueNamesTheAttributeScheme) {
  v1::ExportFileRequest request = Request("dsMonthly01");
  request.mutable_query()->set_id_scheme("ATTRIBUTE:AttrExtId01");
  const grpc::Status status = Export(request);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(status.error_message(),
            "Category ATTRIBUTE:AttrExtId01 for Partner is missing or invalid: null");
}

// DHIS2: Category.getCategoryOption returns null, then a NullPointerException.
TEST_F(AdxMetadataTest, AttributeOptionComboWithoutOptionsIsNamed) {
  const grpc::Status status = Export(Request("dsMonthly01"));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(status.error_message(), "attribute option combo aocEmpty026 has no category options");
}

// DHIS2: AdxDataSetMetadata has no attributes for the option combo, then a NullPointerException.
TEST_F(AdxMetadataTest, OptionComboOutsideTheDataSetsCombosIsNamedByUid) {
  const grpc::Status status = Export(Request("dsOther0002"));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(status.error_message(),
            "category option combo aocAP1x0022 of a value of data element deCharl0003 is in none "
            "of the data sets' category combos");
}

// DHIS2's ADX export ignores attributeCombo and attributeOptions.
TEST_F(AdxMetadataTest, AttributeComboIsRefused) {
  v1::ExportFileRequest request = Request("dsOther0002");
  request.mutable_query()->set_attribute_combo("ccFunding01");
  request.mutable_query()->add_attribute_options("coPartnerA1");
  request.mutable_query()->add_attribute_options("coProject01");
  const grpc::Status status = Export(request);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "attribute_combo: DHIS2's ADX export ignores attribute_combo and attribute_options; "
            "give attribute_option_combo instead");
}

}  // namespace
}  // namespace dvexport
