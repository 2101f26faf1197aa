// DHIS2's password check through libxcrypt: jBCrypt's published test vectors (Spring Security's
// BCrypt is jBCrypt), the three prefixes DHIS2's pattern accepts, Spring Security 6.5.1's
// 72-byte limit, and hashes BCryptPasswordEncoder would not even try.

#include "service/auth/password.h"

#include <gtest/gtest.h>

#include <string>

namespace dvexport::auth {
namespace {

TEST(PasswordTest, JBCryptVectors) {
  EXPECT_TRUE(PasswordMatches("", "$2a$06$DCq7YPn5Rq63x1Lad4cll.TV4S6ytwfsfvkgY8jIucDrjc8deX1s."));
  EXPECT_TRUE(PasswordMatches("a", "$2a$06$m0CrhHm10qJ3lXRY.5zDGO3rS2KdeeWLuGmsfGlMfOxih58VYVfxe"));
  EXPECT_TRUE(
      PasswordMatches("abc", "$2a$06$If6bvum7DFjUnE9p2uDeDu0YHzrHM6tf.iqN8.yx.jNN1ILEf7h0i"));
  EXPECT_FALSE(
      PasswordMatches("abd", "$2a$06$If6bvum7DFjUnE9p2uDeDu0YHzrHM6tf.iqN8.yx.jNN1ILEf7h0i"));
  EXPECT_FALSE(
      PasswordMatches("a", "$2a$06$DCq7YPn5Rq63x1Lad4cll.TV4S6ytwfsfvkgY8jIucDrjc8deX1s."));
  // One character of the stored hash changed.
  EXPECT_FALSE(
      PasswordMatches("abc", "$2a$06$If6bvum7DFjUnE9p2uDeDu0YHzrHM6tf.iqN8.yx.jNN1ILEf7h0j"));
}

TEST(PasswordTest, TheThreePrefixesAgree) {
  EXPECT_TRUE(
      PasswordMatches("abc", "$2b$06$If6bvum7DFjUnE9p2uDeDu0YHzrHM6tf.iqN8.yx.jNN1ILEf7h0i"));
  EXPECT_TRUE(
      PasswordMatches("abc", "$2y$06$If6bvum7DFjUnE9p2uDeDu0YHzrHM6tf.iqN8.yx.jNN1ILEf7h0i"));
  for (const std::string prefix : {"$2a$", "$2b$", "$2y$"}) {
    absl::StatusOr<std::string> hash = BcryptHash("pässword", prefix, 4);
    ASSERT_TRUE(hash.ok()) << prefix << ": " << hash.status();
    EXPECT_EQ(hash->substr(0, 7), prefix + "04$");
    EXPECT_EQ(hash->size(), 60u);
    EXPECT_TRUE(IsBcryptHash(*hash));
    EXPECT_TRUE(PasswordMatches("pässword", *hash)) << *hash;
    EXPECT_FALSE(PasswordMatches("password", *hash)) << *hash;
  }
  EXPECT_EQ(BcryptHash("x", "$1$", 4).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PasswordTest, MoreThan72BytesNeverMatch) {
  // bcrypt reads 72 bytes; Spring Security 6.5.1 (DHIS2 2.42.1+) refuses longer passwords
  // instead of truncating them.
  const std::string password(72, 'p');
  absl::StatusOr<std::string> hash = BcryptHash(password, "$2a$", 4);
  ASSERT_TRUE(hash.ok()) << hash.status();
  EXPECT_TRUE(PasswordMatches(password, *hash));
  EXPECT_FALSE(PasswordMatches(password + "p", *hash));
  EXPECT_FALSE(PasswordMatches(password + "q", *hash));
}

TEST(PasswordTest, NulNeverMatches) {
  absl::StatusOr<std::string> hash = BcryptHash("abc", "$2b$", 4);
  ASSERT_TRUE(hash.ok()) << hash.status();
  EXPECT_FALSE(PasswordMatches(std::string("abc\0def", 7), *hash));
  EXPECT_EQ(BcryptHash(std::string("a\0b", 3), "$2b$", 4).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PasswordTest, HashFormsBCryptPasswordEncoderAccepts) {
  const std::string tail = "If6bvum7DFjUnE9p2uDeDu0YHzrHM6tf.iqN8.yx.jNN1ILEf7h0i";  // 53
  ASSERT_EQ(tail.size(), 53u);
  EXPECT_TRUE(IsBcryptHash("$2a$06$" + tail));
  EXPECT_TRUE(IsBcryptHash("$2b$10$" + tail));
  EXPECT_TRUE(IsBcryptHash("$2y$31$" + tail));
  EXPECT_TRUE(IsBcryptHash("$2$06$" + tail));
  EXPECT_FALSE(IsBcryptHash("$2x$06$" + tail));
  EXPECT_FALSE(IsBcryptHash("$2a$6$" + tail));
  EXPECT_FALSE(IsBcryptHash("$2a$006$" + tail));
  EXPECT_FALSE(IsBcryptHash("$2a$06$" + tail + "x"));
  EXPECT_FALSE(IsBcryptHash("$2a$06$" + tail.substr(1)));
  EXPECT_FALSE(IsBcryptHash("$2a$06$" + tail.substr(1) + "!"));
  EXPECT_FALSE(IsBcryptHash(""));
  EXPECT_FALSE(IsBcryptHash("{noop}abc"));
  EXPECT_FALSE(IsBcryptHash("$1$abcdefgh$abcdefghijklmnopqrstuv"));
  // Malformed hashes never match (and cost a bcrypt all the same).
  EXPECT_FALSE(PasswordMatches("abc", "abc"));
  EXPECT_FALSE(PasswordMatches("", ""));
  // libxcrypt has no bare "$2$" (the 1997 variant, which Spring never writes): refused.
  EXPECT_FALSE(PasswordMatches("abc", "$2$06$" + tail));
  // Cost out of bcrypt's range: libxcrypt refuses it, as jBCrypt throws.
  EXPECT_FALSE(PasswordMatches("abc", "$2a$03$" + tail));
}

}  // namespace
}  // namespace dvexport::auth
