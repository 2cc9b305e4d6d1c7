#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Note [Bessel family approximations]
// Scalar math of the Bessel, Airy, error-function and normal-distribution ops (double, plus
// float forms written once for scalars and vectors where the op is hot: i0e, erfcx, ndtr,
// log_ndtr, ndtri). Every function is split into a few ranges, each a Chebyshev expansion
// (Clenshaw's recurrence) of a smooth, slowly varying function of a reduced variable — the
// classical scheme of Clenshaw's NPL tables and of Cody's and Moshier's Bessel routines:
//  - I0, I1: e^-x I0(x) and e^-x I1(x) (1 + x) / x on [0, 8]; sqrt(x) e^-x I(x) in 8/x beyond.
//  - K0, K1: K + log(x/2) I (and x K1 - x log(x/2) I1), entire in x^2 on (0, 2]; sqrt(x) e^x K
//    in 2/x beyond.
//  - J0, J1: on [0, 8] J divided by its first two zeros' factors (so that the zeros are computed
//    as (x - j_hi) - j_lo, keeping relative accuracy there); Y0, Y1 minus their logarithmic
//    part; beyond 8 the Hankel modulus/phase form sqrt(2 / (pi x)) (P cos xi - Q sin xi), P and
//    Q in (8/x)^2, with xi's cos and sin taken from cos x and sin x (no rounding of x - pi/4).
//  - Ai: the function itself on [-3, 1]; e^zeta Ai(x) x^(1/4) in x^(-3/2) above (zeta = 2/3
//    x^(3/2), carried in two doubles); the modulus/phase pair f, g in (3/|x|)^(3/2) below.
//  - erfcx: exp(x^2) erfc(x) with x^2 split exactly, and its asymptotic series above 12; float:
//    erfcx(x) = t exp(S(t)), t = 1 / (1 + x/2) (the form of Numerical Recipes' erfcc), S fitted.
//  - ndtri: ndtri(p) = sqrt(2) erfinv(2p - 1) with erfinv(a) / a fitted in w = -log(1 - a^2)
//    (and erfinv / sqrt(w) in 1/sqrt(w) for w > 5, the variables of M. Giles, "Approximating the
//    erfinv function", GPU Computing Gems, 2011), then one Newton step on erf or log(erfc)
//    in double.
// The coefficients were computed for this file with mpmath (40 digits) at 80 Chebyshev nodes
// and truncated below 1e-18 of the leading term (float tables: 1e-9; i0e's float tables as
// monomials for Horner's rule); bessel_fit.py next to this file regenerates them.
// Infinite arguments give PyTorch 1.13's values: NaN for i0, i1, j0, j1, y0, y1 and airy_ai
// (where the functions tend to inf or 0), the limits elsewhere.

#include <cmath>
#include <cstddef>
#include <limits>

#include "ember/dtype.h"
#include "kernels/cpu/elementwise/math_functors.h"

namespace ember::cpu::EMBER_CPU_CAP::bessel {

namespace coef {
constexpr double kAiA[27] = {
    1.5343091351488505711e-1,   2.3435152098136109273e-1,  -3.2881534036159305513e-1,
    4.3164855121518906718e-2,   5.3911179869691251035e-2,  -2.2342496362349981878e-2,
    1.276070122915825378e-4,    1.9039836996186242945e-3,  -4.4178265220930971701e-4,
    -2.060950090526704036e-5,   2.6844211918429131173e-5,  -4.099147679584506337e-6,
    -3.3938026923840502214e-7,  2.0279285811161477736e-7,  -2.1838791763050640165e-8,
    -2.5175338821092881483e-9,  9.5305921207364355624e-10, -7.4636276538450303724e-11,
    -1.1202498905836540113e-11, 3.0520125610994772969e-12, -1.7500369688809935122e-13,
    -3.373022280524543794e-14,  7.0816724140692827775e-15, -2.9301309329379293598e-16,
    -7.3724828674690497159e-17, 1.2445262324167153226e-17, -3.5598578862246031537e-19};
constexpr double kAiB[41] = {
    9.637683609849688896e-1,    -3.2416000194485925205e-2,  3.1941239613695835455e-3,
    -4.9422540503301569954e-4,  9.7065179425465946209e-5,   -2.2244445112002981296e-5,
    5.6948389879203430912e-6,   -1.5868397039029867482e-6,  4.7311609911660024168e-7,
    -1.4914679268537125731e-7,  4.9282012394543470797e-8,   -1.6955948660827913109e-8,
    6.0433224591863021752e-9,   -2.2220862485979765654e-9,  8.4008083301014130057e-10,
    -3.2564980497900166868e-10, 1.2913338128187496705e-10,  -5.227872191419495987e-11,
    2.1571120180559685412e-11,  -9.0582219098045042866e-12, 3.8661427181794897189e-12,
    -1.6752774093903056269e-12, 7.3626636341337858267e-13,  -3.2789553078988362523e-13,
    1.4785693873897686738e-13,  -6.7459272277098989259e-14, 3.1120984679855728971e-14,
    -1.4508441986007411284e-14, 6.8314165673156118475e-15,  -3.2472075568584488461e-15,
    1.5574818341550470326e-15,  -7.534762834516680095e-16,  3.6752234022838357685e-16,
    -1.8068071063373415096e-16, 8.9497561855018608062e-17,  -4.4652881839005702699e-17,
    2.2433819359991273797e-17,  -1.1346375254410153757e-17, 5.7756846484917075396e-18,
    -2.9582930657326855872e-18, 1.5243176772720579998e-18};
constexpr double kAiF[22] = {
    9.9892522237650291678e-1,   -1.4123335144014663295e-3,  -3.2320381761512079124e-4,
    1.5396167351134326462e-5,   7.9809926981310559732e-7,   -2.3024558930950582308e-7,
    1.8152180441953643593e-8,   1.5640205434790010918e-9,   -7.317177418179430435e-10,
    1.1078838322158783736e-10,  -1.6252750344974199206e-12, -3.855909092111863275e-12,
    1.1671838399812942759e-12,  -1.7209556925557873218e-13, -4.9949646188000584007e-15,
    1.1447104028956228665e-14,  -3.8377952905988555522e-15, 7.1146269011071601334e-16,
    -1.6921492481095684908e-17, -4.474247595613144876e-17,  2.0298344614619592172e-17,
    -5.3235704619228834793e-18};
constexpr double kAiG[27] = {
    1.9749319104353511655e-2,   -3.8626103503434180022e-4,  -8.1654005341833099544e-5,
    7.3587069428729703097e-6,   1.6645170398534102912e-7,   -1.3384412353729236346e-7,
    1.7506214903913549844e-8,   1.7227237963533658171e-10,  -5.7266790509297904238e-10,
    1.3060786461843703305e-10,  -1.1164162086698118663e-11, -2.7202200095532366331e-12,
    1.3929352671513855861e-12,  -3.0821315453687553832e-13, 2.4950685665036722107e-14,
    1.0330349476272757192e-14,  -5.621170192153090499e-15,  1.5028180048335508899e-15,
    -1.9954406912172462983e-16, -3.3089786633307611354e-17, 3.113961280732646311e-17,
    -1.1355840024319666597e-17, 2.5343312374996500505e-18,  -1.6271228020417835807e-19,
    -1.6434340899237704764e-19, 9.9298374222240676438e-20,  -3.4358660234231800979e-20};
constexpr double kI0A[31] = {
    3.383976372047380425e-1,    -3.0468267234319839868e-1,  1.7162090152220877535e-1,
    -9.4901097048047644421e-2,  4.9305284239670708488e-2,   -2.3737414805899468816e-2,
    1.0546460394594998318e-2,   -4.3243099950505759443e-3,  1.6394756169413357984e-3,
    -5.7637557453858236588e-4,  1.8850288509584165573e-4,   -5.754195010082103704e-5,
    1.6448448070728897089e-5,   -4.4167383584587505636e-6,  1.1173875391201037182e-6,
    -2.6707938539406117339e-7,  6.0469950225419189493e-8,   -1.3000250099862480421e-8,
    2.6598237246823866503e-9,   -5.1897956016352629067e-10, 9.6758090353732369122e-11,
    -1.7268262914415557072e-11, 2.9550526631296398346e-12,  -4.8564467831119294609e-13,
    7.6761854986049356169e-14,  -1.1685332877993451681e-14, 1.7153912855551330306e-15,
    -2.4312798465479546936e-16, 3.3307945188222380978e-17,  -4.4153416464793393795e-18,
    5.6691780069214961571e-19};
constexpr double kI0B[27] = {
    4.022452055070544158e-1,    3.3691164782556940899e-3,   6.8897583469168239843e-5,
    2.891370520834756483e-6,    2.0489185894690637418e-7,   2.2666689904981780646e-8,
    3.3962320257083863452e-9,   4.9406023882249695891e-10,  1.1889147107846438342e-11,
    -3.1499165279632413645e-11, -1.3215811840447713119e-11, -1.7941785315068061178e-12,
    7.1801244513836662337e-13,  3.8527783827421427011e-13,  1.5400862175214098269e-14,
    -4.1505693472872220866e-14, -9.5548466988283076487e-15, 3.8116806693526224207e-15,
    1.7725601330565263836e-15,  -3.4254856196772191346e-16, -2.8276239805165834849e-16,
    3.4612228676974610931e-17,  4.465621420296759999e-17,   -4.8305044859441820713e-18,
    -7.2331804878747539546e-18, 9.9214754121736985989e-19,  1.1936508908459820855e-18};
constexpr double kI1A[31] = {
    2.7863492939341602675e-1,   -1.7162090152220877535e-1,  5.4493294317377383761e-2,
    -9.9896905995277327098e-3,  -3.3878870523097950239e-3,  4.9453194767478191912e-3,
    -3.373199968950461826e-3,   1.7695555478066621142e-3,   -7.8923675207142092467e-4,
    3.1139913535866890238e-4,   -1.1098970358636965151e-4,  3.6205986487079262341e-5,
    -1.090881482432957022e-5,   3.0568014346380566356e-6,   -8.009978587389498786e-7,
    1.9716906904360219199e-7,   -4.5767995146893361269e-8,  1.0051944070687820536e-8,
    -2.0949741571396406121e-9,  4.1541594273310382355e-10,  -7.8556811771115934121e-11,
    1.4197259282146199628e-11,  -2.4568958226516583092e-12, 4.0785076654219017148e-13,
    -6.5051482516351971688e-14, 9.9841102423411224218e-15,  -1.4766063408898357032e-15,
    2.1071115905485388261e-16,  -2.9047170077866516953e-17, 3.8726233943841260582e-18,
    -4.9986467664082297381e-19};
constexpr double kI1B[27] = {
    3.8928811750914006024e-1,   -9.7610974913614684078e-3,  -1.1058893876262371629e-4,
    -3.8825648088776903935e-6,  -2.5122362378702089253e-7,  -2.6314688468895195068e-8,
    -3.835380385964237022e-9,   -5.5897434621965838069e-10, -1.8974958123505412345e-11,
    3.2526035830154882386e-11,  1.4125807436613781332e-11,  2.0356285441470895072e-12,
    -7.1985517762459085121e-13, -4.0835511110921973182e-13, -2.101541842772664313e-14,
    4.2724400167119513543e-14,  1.0420276984128802764e-14,  -3.8144030724370078048e-15,
    -1.8803547755107824485e-15, 3.3082023109209282827e-16,  2.9626289976459501391e-16,
    -3.2095259219934239588e-17, -4.6503053684893583256e-17, 4.4143483230717079499e-18,
    7.5172963108421048054e-18,  -9.3141788673268833757e-19, -1.2421932751948909561e-18};
constexpr double kJ0A[15] = {
    1.9903555001601485507e-3,   -2.6209391384970251074e-3,  8.6877214720625765228e-4,
    -1.7040584951557357836e-4,  2.2049086394548170116e-5,   -2.0248894980012834754e-6,
    1.3898025173428905038e-7,   -7.4067012543441668298e-9,  3.1559927583611333054e-10,
    -1.1003860827939697825e-11, 3.1989232970233478365e-13,  -7.875041254709154765e-15,
    1.6632588015211277679e-16,  -3.0475993756698375468e-18, 4.8912290055811177356e-20};
constexpr double kJ0Zero1[2] = {2.404825557695773, -1.176691651530894e-16};
constexpr double kJ0Zero2[2] = {5.520078110286311, 8.088597146146722e-17};
constexpr double kJ1A[15] = {
    2.7895709887613103624e-4,   -3.1156840366435617848e-4,  8.5536465885405377771e-5,
    -1.41493564256234844e-5,    1.5764700992258890886e-6,   -1.2690755023694251413e-7,
    7.7476140770730568586e-9,   -3.7165771466757721601e-10, 1.4395417669312554298e-11,
    -4.6000782241345198755e-13, 1.2341465589619717367e-14,  -2.8205466239524856648e-16,
    5.5588210659515719646e-18,  -9.5469308657552193298e-20, 1.441829178131505127e-21};
constexpr double kJ1Zero1[2] = {3.8317059702075125, -1.5269184090088067e-16};
constexpr double kJ1Zero2[2] = {7.015586669815619, -9.414165653410389e-17};
constexpr double kK0A[11] = {
    -2.6766369661695138436e-1, 3.4428989992462848689e-1,  3.5979936515361501627e-2,
    1.2646154114469259234e-3,  2.2862121031194517861e-5,  2.5347910790261494573e-7,
    1.904516377220208859e-9,   1.0349695257633624585e-11, 4.2598161427910825765e-14,
    1.3744654358807508969e-16, 3.570896528508373591e-19};
constexpr double kK0B[26] = {
    1.2201515410329777273,      -3.1448101311964500543e-2,  1.5698838857300533749e-3,
    -1.2849549581627802638e-4,  1.3949813718876499364e-5,   -1.8317555227191194848e-6,
    2.7668136394450150761e-7,   -4.6604898976879476656e-8,  8.5740340174142260858e-9,
    -1.6975345093890615156e-9,  3.5773972814003284472e-10,  -7.9574892444773970377e-11,
    1.855949114954926555e-11,   -4.5145978833745191751e-12, 1.1403405882073442347e-12,
    -2.9800969231481783548e-13, 8.0328907750683743694e-14,  -2.2275133267462963604e-14,
    6.3400764762766459661e-15,  -1.8485933779209071694e-15, 5.5120559994043333649e-16,
    -1.6782311257549006383e-16, 5.2103917776435541125e-17,  -1.6475805939842632815e-17,
    5.300433771177335771e-18,   -1.7331712005821000278e-18};
constexpr double kK1A[11] = {
    7.6265011366947388527e-1,   -3.5315596077654487567e-1,  -1.2261118082265714823e-1,
    -6.9757238596398643502e-3,  -1.730288957513052063e-4,   -2.433406141565968235e-6,
    -2.2133876307347258558e-8,  -1.4114883926335277611e-10, -6.6669016941993290061e-13,
    -2.4274498505193659339e-15, -7.0238634793862875972e-18};
constexpr double kK1B[26] = {
    1.3603130952422213347,      1.0392373657681723844e-1,   -2.8578168596227793868e-3,
    1.9521551847135163111e-4,   -1.93619797416608296e-5,    2.4064849478372171171e-6,
    -3.5019606030878125421e-7,  5.7410841254500492923e-8,   -1.0345762465678097027e-8,
    2.0150497551970346161e-9,   -4.1903547593419255842e-10, 9.2183151876053141258e-11,
    -2.1299678384277910216e-11, 5.1396396734823435404e-12,  -1.2891739609498229352e-12,
    3.3484196660522431201e-13,  -8.9767051820101460692e-14, 2.4771544242195986813e-14,
    -7.0198370892147688513e-15, 2.0387031662398608799e-15,  -6.0570472706430178228e-16,
    1.8380935752430454256e-16,  -5.6894628491936483743e-17, 1.7940510478863572914e-17,
    -5.7567444820733024503e-18, 1.8778651901623267401e-18};
constexpr double kNdtriA[15] = {
    1.4912989404744902194,     6.0175630341083001729e-1,  -9.1705595000809263564e-3,
    -4.9626353267664245073e-3, 9.1537967000796420424e-4,  -3.8895627570830006071e-6,
    -2.4202599404944083576e-5, 3.2665715925842332116e-6,  2.7758889803736632388e-7,
    -1.3023363013643025315e-7, 8.1046434247918696374e-9,  2.862438517693074928e-9,
    -5.975090007034137414e-10, -1.222297879869563046e-11, 1.9595963971356971313e-11};
constexpr double kNdtriB[22] = {
    9.6227185284002835694e-1,   -3.6898459240891257748e-2, 4.408398116118775297e-4,
    1.4066499609055604706e-3,   -2.6431564845719893398e-4, 3.5091613883991166633e-5,
    -1.2636830871883776594e-5,  3.2868704112808052228e-6,  -1.0047310897123891656e-6,
    5.1946961194019460842e-7,   -1.5821848052725919978e-7, 5.00569552321108826e-8,
    -3.1182307994251480123e-8,  1.2628259346947534649e-8,  -3.5628268398244301979e-9,
    2.0697455687995382195e-9,   -1.2182632343397622011e-9, 4.0260642639907935995e-10,
    -1.4276398238989280359e-10, 1.0425922718595430291e-10, -5.520218124440010483e-11,
    1.7052301356247469561e-11};
constexpr double kP0[14] = {
    9.9946034934751866537e-1,   -5.3652204681321174247e-4,  3.0751847875194746219e-6,
    -5.170594537606097701e-8,   1.6306464635151383095e-9,   -7.864091377237069999e-11,
    5.1682623873491924622e-12,  -4.3045788699253912224e-13, 4.3265957431549405642e-14,
    -5.0690340959352360775e-15, 6.7480722157338737041e-16,  -1.0011513723467785834e-16,
    1.6305919233744184736e-17,  -2.880866169482871202e-18};
constexpr double kP1[14] = {
    1.0009030408600136999,      8.9898983308594085557e-4,   -3.9872843004889085228e-6,
    6.1776339606442985349e-8,   -1.8718907491063066087e-9,  8.8168986595823388985e-11,
    -5.7048636403956447019e-12, 4.6991955152305423752e-13,  -4.6842237839904892216e-14,
    5.4526748960447171683e-15,  -7.2211808422740179189e-16, 1.0667689114335412457e-16,
    -1.7312313216116334973e-17, 3.0492991197665872261e-18};
constexpr double kQ0[17] = {
    -1.55558546053370091e-2,    6.8385199426116495994e-5,   -7.4144984110606472645e-7,
    1.7972457247968991784e-8,   -7.2719159368663199794e-10, 4.2201219046687384438e-11,
    -3.2067474209966347446e-12, 3.0061451253517063112e-13,  -3.336328185322426997e-14,
    4.2552250402454611232e-15,  -6.0999301316400500098e-16, 9.6621289703032567377e-17,
    -1.66860652143781463e-17,   3.1082440486738144338e-18,  -6.1911157873581449275e-19,
    1.3091448717220121549e-19,  -2.921162715264277363e-20};
constexpr double kQ1[16] = {
    4.6777787069535325241e-2,   -9.6277235491570793242e-5,  9.1386152579554541244e-7,
    -2.0959781384083422461e-8,  8.229193327650554129e-10,   -4.6863636881769452305e-11,
    3.5152187949686080851e-12,  -3.264315674327899926e-13,  3.596776582916529193e-14,
    -4.5612523950772971943e-15, 6.5082829577833839539e-16,  -1.0269147531823242863e-16,
    1.7676355487764791603e-17,  -3.2834519872981614605e-18, 6.5240811495892603032e-19,
    -1.3765771484849488032e-19};
constexpr double kY0A[18] = {
    -3.3146113203284941656e-2,  -2.7447430552974526529e-1,  1.7903431407718266299e-1,
    2.615673462550466368e-1,    -1.7730201278114358212e-1,  4.7196689595763386875e-2,
    -7.2879624795520791794e-3,  7.5311359325777422807e-4,   -5.6320791410569869751e-5,
    3.2065325376548009793e-6,   -1.4407233274018699479e-7,  5.2487947873305161232e-9,
    -1.5837552541812015122e-10, 4.0263308183061207531e-12,  -8.7473412033107695544e-14,
    1.6434898714919469038e-15,  -2.6977881152566835632e-17, 3.9032584173475982707e-19};
constexpr double kY1A[17] = {
    2.5380132357417817303e-3,   -1.6087173047668750173e-2, -9.5912045360830742472e-2,
    8.4451972596523458368e-2,   -2.8328123944594365554e-2, 5.2898975441671130141e-3,
    -6.4145514513263559874e-4,  5.5059828733387438376e-5,  -3.5380800186893499017e-6,
    1.770780455615440341e-7,    -7.1105500498992797819e-9, 2.3443379059115163947e-10,
    -6.4651518414115942418e-12, 1.5142915120500199545e-13, -3.051185969447325274e-15,
    5.3466803857286701231e-17,  -8.2249113720215846294e-19};
constexpr float kErfcxSF[16] = {
    -6.513268599e-1, 6.419697924e-1, 1.94764732e-2,    -9.561514787e-3,
    -9.465953445e-4, 3.668394979e-4, 4.252332481e-5,   -2.027857811e-5,
    -1.624290005e-6, 1.303655836e-6, 1.562644172e-8,   -8.523809591e-8,
    6.529054439e-9,  5.059343496e-9, -9.913641565e-10, -2.273651223e-10};
constexpr float kI0AF[20] = {2.070019211e-1, -1.130043265e-1, 9.45156472e-2,  -8.9043467e-2,
                             8.734280515e-2, -8.496283115e-2, 7.928297277e-2, -6.954659125e-2,
                             5.67272883e-2,  -4.295691574e-2, 3.036063714e-2, -1.977620607e-2,
                             1.15540656e-2,  -6.604619497e-3, 4.169273658e-3, -2.04734508e-3,
                             4.126514604e-4, -2.057593459e-4, 3.486284152e-4, -1.360473778e-4};
constexpr float kI0BF[8] = {4.021765094e-1, 3.360552242e-3, 1.362171642e-4, 1.113981566e-5,
                            1.476115734e-6, 3.073322917e-7, 1.086794248e-7, 3.161985528e-8};
constexpr float kNdtriAF[12] = {1.49129894,    6.017563034e-1,  -9.1705595e-3,  -4.962635327e-3,
                                9.1537967e-4,  -3.889562757e-6, -2.42025994e-5, 3.266571593e-6,
                                2.77588898e-7, -1.302336301e-7, 8.104643425e-9, 2.862438518e-9};
constexpr float kNdtriBF[12] = {9.569570194e-1,  -3.187170832e-2, 1.341366054e-3,  6.606310263e-4,
                                -1.095128498e-4, 5.872395534e-6,  -2.496950687e-6, 4.649985407e-7,
                                3.759007604e-8,  4.040759593e-8,  -1.671378798e-8, -3.367823824e-9};
}  // namespace coef

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.14159265358979323846;
constexpr double kInvSqrtPi = 0.56418958354775628695;  // 1 / sqrt(pi)
constexpr double kSqrtPi = 1.77245385090551602730;
constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Lo = -4.8336466567264567e-17;  // 1/sqrt(2) - kInvSqrt2
constexpr double kTwoOverPi = 0.63661977236758134308;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;

/// Σ' c_k T_k(u) with c_0 already halved (Clenshaw); V is a scalar or a vector of T.
template <class T, size_t N, class V>
inline V cheb(const T (&c)[N], V u) {
  V b1 = V{} + T(0), b2 = V{} + T(0);
  V u2 = u + u;
  for (size_t k = N - 1; k >= 1; --k) {
    V b0 = u2 * b1 - b2 + c[k];
    b2 = b1;
    b1 = b0;
  }
  return u * b1 - b2 + c[0];
}

/// Σ c_k u^k (Horner); the float tables that use it hold monomial coefficients.
template <class T, size_t N, class V>
inline V horner(const T (&c)[N], V u) {
  V r = V{} + c[N - 1];
  for (size_t k = N - 1; k >= 1; --k) r = r * u + c[k - 1];
  return r;
}

// ---- scalar/vector-generic float helpers (math_functors.h has gsel, gabs, gexp) ----
using math::gabs;
using math::gexp;
using math::gsel;
inline float glog(float x) { return std::log(x); }
inline vfloat glog(vfloat x) { return vlog(x); }
inline float glog1p(float x) { return std::log1p(x); }
inline vfloat glog1p(vfloat x) { return vlog1p(x); }
inline float gsqrt(float x) { return std::sqrt(x); }
inline vfloat gsqrt(vfloat x) { return math::vsqrt(x); }

// ---- modified Bessel functions of the first kind ----

inline double i0e(double x) {
  double a = std::fabs(x);
  if (a <= 8) return cheb(coef::kI0A, a * 0.25 - 1);
  return cheb(coef::kI0B, 16 / a - 1) / std::sqrt(a);
}
inline double i0(double x) {
  double a = std::fabs(x);
  if (a <= 8) return std::exp(a) * cheb(coef::kI0A, a * 0.25 - 1);
  if (a == kInf) return kNaN;
  double h = std::exp(0.5 * a);  // e^a in two halves: finite results up to a = 713.9
  return h * (h * (cheb(coef::kI0B, 16 / a - 1) / std::sqrt(a)));
}
inline double i1e(double x) {
  double a = std::fabs(x);
  // Odd, with i1e(-0.0) = +0.0 as PyTorch.
  double r = a <= 8 ? a * cheb(coef::kI1A, a * 0.25 - 1) / (1 + a)
                    : cheb(coef::kI1B, 16 / a - 1) / std::sqrt(a);
  return x < 0 ? -r : r;
}
inline double i1(double x) {
  double a = std::fabs(x);
  double r;
  if (a <= 8) {
    r = a * std::exp(a) * cheb(coef::kI1A, a * 0.25 - 1) / (1 + a);
  } else {
    if (a == kInf) return kNaN;
    double h = std::exp(0.5 * a);
    r = h * (h * (cheb(coef::kI1B, 16 / a - 1) / std::sqrt(a)));
  }
  return x < 0 ? -r : r;
}

/// i0e for float, scalar or vector: the float tables, both ranges evaluated and selected.
template <class V>
inline V i0e_f(V x) {
  V a = gabs(x);
  V small = horner(coef::kI0AF, a * 0.25f - 1.0f);
  V large = horner(coef::kI0BF, 16.0f / a - 1.0f) / gsqrt(a);
  return gsel(a <= 8.0f, small, large);
}

// ---- modified Bessel functions of the second kind (x < 0: NaN, K(0) = inf) ----

inline double k0_small(double x) {  // x in (0, 2]
  return cheb(coef::kK0A, 0.5 * x * x - 1) - std::log(0.5 * x) * i0(x);
}
inline double k1_small(double x) {
  return std::log(0.5 * x) * i1(x) + cheb(coef::kK1A, 0.5 * x * x - 1) / x;
}
inline double k0e(double x) {
  if (x == 0) return kInf;
  if (!(x > 0)) return kNaN;
  if (x <= 2) return std::exp(x) * k0_small(x);
  return cheb(coef::kK0B, 4 / x - 1) / std::sqrt(x);
}
inline double k0(double x) {
  if (x == 0) return kInf;
  if (!(x > 0)) return kNaN;
  if (x <= 2) return k0_small(x);
  return std::exp(-x) * (cheb(coef::kK0B, 4 / x - 1) / std::sqrt(x));
}
inline double k1e(double x) {
  if (x == 0) return kInf;
  if (!(x > 0)) return kNaN;
  if (x <= 2) return std::exp(x) * k1_small(x);
  return cheb(coef::kK1B, 4 / x - 1) / std::sqrt(x);
}
inline double k1(double x) {
  if (x == 0) return kInf;
  if (!(x > 0)) return kNaN;
  if (x <= 2) return k1_small(x);
  return std::exp(-x) * (cheb(coef::kK1B, 4 / x - 1) / std::sqrt(x));
}

// ---- Bessel functions of the first and second kind ----

/// (x - z) for a zero z = hi + lo given to double-double accuracy.
inline double minus_zero(double x, const double (&z)[2]) { return (x - z[0]) - z[1]; }

/// The Hankel modulus/phase pieces for x > 8: P and Q of order `nu` (0 or 1).
inline void hankel_pq(double x, int nu, double& p, double& q) {
  double w = 8 / x, u = 2 * w * w - 1;
  if (nu == 0) {
    p = cheb(coef::kP0, u);
    q = w * cheb(coef::kQ0, u);
  } else {
    p = cheb(coef::kP1, u);
    q = w * cheb(coef::kQ1, u);
  }
}

inline double j0(double x) {
  double a = std::fabs(x);
  if (a <= 8) {
    double r = cheb(coef::kJ0A, a * a / 32 - 1);
    return r * minus_zero(a, coef::kJ0Zero1) * (a + coef::kJ0Zero1[0]) *
           minus_zero(a, coef::kJ0Zero2) * (a + coef::kJ0Zero2[0]);
  }
  if (!(a < kInf)) return kNaN;
  double p, q, s = std::sin(a), c = std::cos(a);
  hankel_pq(a, 0, p, q);
  // cos(a - pi/4) = (c + s) / sqrt(2), sin(a - pi/4) = (s - c) / sqrt(2).
  return (p * (c + s) - q * (s - c)) * (kInvSqrtPi / std::sqrt(a));
}
inline double j1(double x) {
  double a = std::fabs(x);
  if (a <= 8) {
    double r = cheb(coef::kJ1A, a * a / 32 - 1);
    return x * r * minus_zero(a, coef::kJ1Zero1) * (a + coef::kJ1Zero1[0]) *
           minus_zero(a, coef::kJ1Zero2) * (a + coef::kJ1Zero2[0]);
  }
  if (!(a < kInf)) return kNaN;
  double p, q, s = std::sin(a), c = std::cos(a);
  hankel_pq(a, 1, p, q);
  // cos(a - 3pi/4) = (s - c) / sqrt(2), sin(a - 3pi/4) = -(s + c) / sqrt(2).
  double r = (p * (s - c) + q * (s + c)) * (kInvSqrtPi / std::sqrt(a));
  return x < 0 ? -r : r;
}
inline double y0(double x) {
  if (x == 0) return -kInf;
  if (!(x > 0)) return kNaN;
  if (x <= 8) return cheb(coef::kY0A, x * x / 32 - 1) + kTwoOverPi * std::log(x) * j0(x);
  if (x == kInf) return kNaN;
  double p, q, s = std::sin(x), c = std::cos(x);
  hankel_pq(x, 0, p, q);
  return (p * (s - c) + q * (c + s)) * (kInvSqrtPi / std::sqrt(x));
}
inline double y1(double x) {
  if (x == 0) return -kInf;
  if (!(x > 0)) return kNaN;
  if (x <= 8)
    return x * cheb(coef::kY1A, x * x / 32 - 1) + kTwoOverPi * (std::log(x) * j1(x) - 1 / x);
  if (x == kInf) return kNaN;
  double p, q, s = std::sin(x), c = std::cos(x);
  hankel_pq(x, 1, p, q);
  return (q * (s - c) - p * (s + c)) * (kInvSqrtPi / std::sqrt(x));
}

/// sin(x) / x.
inline double spherical_j0(double x) {
  if (std::isinf(x)) return 0;
  if (std::fabs(x) < 0.5) {
    // Σ (-1)^k x^2k / (2k + 1)!, to k = 8 (the next term is below 1e-19 here).
    constexpr double c[] = {1.0,
                            -1.0 / 6,
                            1.0 / 120,
                            -1.0 / 5040,
                            1.0 / 362880,
                            -1.0 / 39916800,
                            1.0 / 6227020800.0,
                            -1.0 / 1307674368000.0,
                            1.0 / 355687428096000.0};
    double z = x * x, r = c[8];
    for (int k = 7; k >= 0; --k) r = r * z + c[k];
    return r;
  }
  return std::sin(x) / x;
}

// ---- the Airy function Ai ----

/// zeta = 2/3 x^(3/2) as hi + lo (x > 0): sqrt, product and the constant 2/3 each carry their
/// rounding error, so e^-zeta and sin(zeta) keep relative accuracy for large x.
inline void airy_zeta(double x, double& hi, double& lo) {
  constexpr double kTwoThirds = 0.66666666666666662966, kTwoThirdsLo = 3.7007434154171883e-17;
  double s = std::sqrt(x);
  double s_lo = std::fma(-s, s, x) / (2 * s);
  double p = x * s;
  double p_lo = std::fma(x, s, -p) + x * s_lo;
  hi = p * kTwoThirds;
  lo = std::fma(p, kTwoThirds, -hi) + p * kTwoThirdsLo + p_lo * kTwoThirds;
}

inline double airy_ai(double x) {
  if (!(std::fabs(x) < kInf)) return kNaN;
  if (x >= -3 && x <= 1) return cheb(coef::kAiA, 0.5 * (x + 1));
  if (x > 1) {
    if (x > 110) return 0;  // Ai(110) < 1e-330
    double s = std::sqrt(x), w = 1 / (x * s);
    double h = cheb(coef::kAiB, 2 * w - 1), zh, zl;
    airy_zeta(x, zh, zl);
    return std::exp(-zh) * (1 - zl) * h * (0.5 * kInvSqrtPi) / std::sqrt(s);
  }
  double ax = -x, s = std::sqrt(ax);
  if (!(ax * s < 1e300)) return 0;               // |Ai| < 1e-75 and the phase is lost
  double w = 5.19615242270663188058 / (ax * s);  // (3 / |x|)^(3/2)
  double u = 2 * w - 1;
  double f = cheb(coef::kAiF, u), g = w * cheb(coef::kAiG, u), zh, zl;
  airy_zeta(ax, zh, zl);
  // theta = zeta + pi/4: the rotation by the small part zl + pi/4 is done exactly.
  double b = zl + 0.78539816339744830962, sb = std::sin(b), cb = std::cos(b);
  double sh = std::sin(zh), ch = std::cos(zh);
  double st = sh * cb + ch * sb, ct = ch * cb - sh * sb;
  return (f * st - g * ct) * kInvSqrtPi / std::sqrt(s);
}

// ---- the error-function family ----

/// exp(x^2) with x^2 carried exactly (hi + lo): relative accuracy for large |x|.
inline double exp_x2(double x) {
  double h = x * x;
  if (!(h < 709.8)) return kInf;
  double l = std::fma(x, x, -h);
  return std::exp(h) * (1 + l);
}

/// erfcx(x) = exp(x^2) erfc(x).
inline double erfcx(double x) {
  if (x != x) return x;
  if (x < 0) {
    if (x < -26.7) return kInf;
    return 2 * exp_x2(x) - erfcx(-x);
  }
  if (x < 12) return exp_x2(x) * std::erfc(x);
  // erfc(x) e^(x^2) ~ 1 / (x sqrt(pi)) Σ (-1)^k (2k - 1)!! / (2x^2)^k; at x >= 12 the terms fall
  // below 1e-17 by k = 11.
  double v = 0.5 / (x * x);
  if (!(v > 0)) return kInvSqrtPi / x;
  double r = 0;
  for (int k = 11; k >= 1; --k) r = 1 - (2 * k - 1) * v * r;
  return r * kInvSqrtPi / x;
}

/// erfc(y / sqrt(2)), with the rounding of y / sqrt(2) corrected to first order.
inline double erfc_over_sqrt2(double y) {
  double z = y * kInvSqrt2;
  double r = std::erfc(z);
  if (std::fabs(z) < 30 && z != 0) {
    double d = std::fma(y, kInvSqrt2, -z) + y * kInvSqrt2Lo;
    r -= d * kTwoOverSqrtPi * std::exp(-z * z);
  }
  return r;
}

inline double ndtr(double x) { return 0.5 * erfc_over_sqrt2(-x); }

inline double log_ndtr(double x) {
  if (x < -1) {
    if (x == -kInf) return -kInf;
    double h = x * x;
    if (!(h < kInf)) return -kInf;
    double l = std::fma(x, x, -h);
    // log Φ(x) = log(erfcx(-x / sqrt 2) / 2) - x^2 / 2: no underflow, no cancellation.
    return (std::log(0.5 * erfcx(-x * kInvSqrt2)) - 0.5 * h) - 0.5 * l;
  }
  return std::log1p(-0.5 * erfc_over_sqrt2(x));
}

/// erfinv(a) / a for w = -log(1 - a^2) < 5 (float and double tables), and erfinv / sqrt(w) in
/// 1 / sqrt(w) for w >= 5.
template <class T, size_t N, class V>
inline V ndtri_central(const T (&c)[N], V w) {
  return cheb(c, w * T(0.4) - T(1));
}
template <class T, size_t N, class V>
inline V ndtri_tail(const T (&c)[N], V v, T vlo, T vhi) {
  return cheb(c, (v - vlo) * (T(2) / (vhi - vlo)) - T(1));
}

inline double ndtri(double p) {
  if (!(p >= 0 && p <= 1)) return kNaN;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  if (p >= 0.25 && p <= 0.75) {
    double y = 2 * p - 1;  // exact
    double w = -std::log1p(-y * y);
    double x = kSqrt2 * y * ndtri_central(coef::kNdtriA, w);
    // Newton on erf(x / sqrt 2) = y.
    return x - (std::erf(x * kInvSqrt2) - y) * (kSqrtPi * kInvSqrt2) * std::exp(0.5 * x * x);
  }
  double pp = p < 0.5 ? p : 1 - p;  // 1 - p is exact for p >= 1/2
  double q = 2 * pp;                // solve erfc(z) = q, z > 0
  double w = -std::log(q * (2 - q));
  double z;
  if (w < 5) {
    z = (1 - q) * ndtri_central(coef::kNdtriA, w);
  } else {
    double s = std::sqrt(w);
    z = s * ndtri_tail(coef::kNdtriB, 1 / s, 1 / 27.5, 1 / 2.23606797749978969641);
  }
  // Newton on log(erfc(z)) = log(q), through erfcx (no underflow); z^2 exactly as h + l.
  double h = z * z, l = std::fma(z, z, -h);
  double e = erfcx(z);
  z += ((std::log(e) - std::log(q) - h) - l) * e * (0.5 * kSqrtPi);
  return p < 0.5 ? -kSqrt2 * z : kSqrt2 * z;
}

// ---- float forms of the hot error-function ops (scalar or vector) ----

/// erfcx(a) for a >= 0 (float): t exp(S(t)), t = 1 / (1 + a / 2).
template <class V>
inline V erfcx_pos_f(V a) {
  V t = 1.0f / (1.0f + 0.5f * a);
  return t * math::exp_nonpos_f32(cheb(coef::kErfcxSF, t + t - 1.0f));  // S <= 0
}

/// x^2 = h + l exactly (l = 0 where x^2 overflows).
template <class V>
inline void square_split(V x, V& h, V& l) {
  h = x * x;
  l = gsel(h < 3.0e38f, math::square_err(x, h), V{} + 0.0f);
}

/// Whether any lane of a comparison mask is set.
inline bool gany(bool m) { return m; }
inline bool gany(vint32 m) {
  int32_t r = 0;
  for (int i = 0; i < kLanes<float>; ++i) r |= m[i];
  return r != 0;
}

template <class V>
inline V erfcx_f(V x) {
  V r = erfcx_pos_f(gabs(x));
  auto neg = x < 0.0f;
  if (!gany(neg)) return r;
  V h, l;
  square_split(x, h, l);
  return gsel(neg, 2.0f * (gexp(h) * (1.0f + l)) - r, r);  // 2 exp(x^2) - erfcx(-x)
}

/// Φ(x) = erfcx(|x| / sqrt 2) exp(-x^2 / 2) / 2, or one minus that for x > 0.
template <class V>
inline V ndtr_f(V x) {
  V h, l;
  square_split(x, h, l);
  V half = 0.5f * erfcx_pos_f(gabs(x) * 0.70710678f) * (gexp(-0.5f * h) * (1.0f - 0.5f * l));
  return gsel(x < 0.0f, half, 1.0f - half);
}

/// log Φ(x): log1p of (erfcx(-x / sqrt 2) / 2 - 1) minus x^2 / 2 for x < 0, log1p(-(1 - Φ))
/// above; one log1p for both.
template <class V>
inline V log_ndtr_f(V x) {
  V h, l;
  square_split(x, h, l);
  V e = 0.5f * erfcx_pos_f(gabs(x) * 0.70710678f);
  auto neg = x < 0.0f;
  // e - 1 is at least -1 + 2^-24: below that log(e) is lost next to -x^2 / 2 anyway (|x| > 1e7).
  V em1 = e - 1.0f;
  em1 = gsel(em1 < -0.99999994f, V{} - 0.99999994f, em1);
  V arg = gsel(neg, em1, -(e * (gexp(-0.5f * h) * (1.0f - 0.5f * l))));
  V tail = -0.5f * h - 0.5f * l;
  V r = glog1p(arg);
  r = gsel(neg, r + tail, r);  // log_ndtr(inf) = -0.0
  return gsel(x == -std::numeric_limits<float>::infinity(),
              V{} - std::numeric_limits<float>::infinity(), r);
}

template <class V>
inline V ndtri_f(V p) {
  V pp = gsel(p > 0.5f, 1.0f - p, p);
  V q = pp + pp;
  V w = -glog(q * (2.0f - q));
  V central = (1.0f - q) * ndtri_central(coef::kNdtriAF, w);
  V s = gsqrt(w);
  V tail = s * ndtri_tail(coef::kNdtriBF, 1.0f / s, 1.0f / 10.2f, 0.447213595f);
  V z = 1.41421356f * gsel(w < 5.0f, central, tail);
  return gsel(p < 0.5f, -z, z);
}

}  // namespace ember::cpu::EMBER_CPU_CAP::bessel
